//! `satprobe rtt`: an echo responder in the receiver's namespace returns
//! each probe; a collector on the sender's socket times the echoes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use satprobe::cli::RttOpts;
use satprobe::schedule::Schedule;
use satprobe::{first_arrival, ns_to_ms, rtt};
use serde::Serialize;

use super::udp::{bind_receiver, connect_sender, receive_until_done, send, send_while_receiving};
use super::{is_timeout, joined, LEAD_NS, POLL, SMALL_RCVBUF};
use crate::sys;

/// An echo as it came back: sequence number, send time, arrival time (ns).
type Echo = (u32, u64, u64);

#[derive(Serialize)]
pub struct RttOut {
    sent: u64,
    received: u64,
    rtt_ms: Vec<f64>,
    /// Every probe in send order, `interval_ms` apart: its RTT, or null
    /// where it was lost (the time series).
    series_ms: Vec<Option<f64>>,
    interval_ms: f64,
}

pub fn run(o: &RttOpts) -> Result<RttOut, String> {
    let c = &o.common;
    let echo_sock = bind_receiver(c)?;
    let _ = sys::grow_buffer(&echo_sock, true, SMALL_RCVBUF);
    let tx = connect_sender(c)?;
    let _ = sys::grow_buffer(&tx, true, SMALL_RCVBUF);
    let rx = tx.try_clone().map_err(|e| format!("dup socket: {e}"))?;
    let stop_echo = AtomicBool::new(false);
    sys::precise_timers();

    let echoes = thread::scope(|s| -> Result<Vec<Echo>, String> {
        // Echo responder, in to-netns: returns our probes verbatim.
        let echo = s.spawn(|| -> Result<(), String> {
            sys::precise_timers();
            echo_sock
                .set_read_timeout(Some(POLL))
                .map_err(|e| e.to_string())?;
            let mut buf = [0u8; 2048];
            while !stop_echo.load(Ordering::Relaxed) {
                match echo_sock.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        if rtt::decode(&buf[..n]).is_some() {
                            let _ = echo_sock.send_to(&buf[..n], from);
                        }
                    }
                    Err(e) if is_timeout(&e) => {}
                    Err(e) => return Err(format!("echo responder: {e}")),
                }
            }
            Ok(())
        });
        // Echo collector, on the sender's socket in from-netns.
        let collect = |finish: &_| -> Result<Vec<Echo>, String> {
            let mut seen = vec![false; o.count as usize];
            let mut buf = [0u8; 2048];
            let mut got = Vec::with_capacity(o.count as usize);
            receive_until_done(&rx, &mut buf, finish, |b, t| match rtt::decode(b) {
                Some((seq, ts)) => {
                    got.push((seq, ts, t));
                    first_arrival(&mut seen, seq.into())
                }
                None => false,
            })
            .map_err(|e| format!("receiving echoes: {e}"))?;
            Ok(got)
        };
        let send_all = || -> Result<(u64, ()), String> {
            let sched = Schedule::every(sys::now_ns() + LEAD_NS, o.interval_ms, o.count);
            for i in 0..o.count {
                sys::sleep_until(sched.due_ns(i));
                send(&tx, &rtt::encode(i as u32, sys::now_ns()), c)?;
            }
            Ok((o.count, ()))
        };
        let collected = send_while_receiving(c.timeout_ms, "echo collector", collect, send_all);
        stop_echo.store(true, Ordering::Relaxed);
        let echoed = joined(echo.join(), "echo responder");
        let ((), echoes) = collected?;
        echoed?;
        Ok(echoes)
    })?;

    let rtts = rtt::collect(o.count, &echoes);
    Ok(RttOut {
        sent: o.count,
        received: rtts.len() as u64,
        rtt_ms: rtts.iter().map(|&(_, r)| ns_to_ms(r)).collect(),
        series_ms: rtt::series(o.count, &rtts)
            .into_iter()
            .map(|r| r.map(ns_to_ms))
            .collect(),
        interval_ms: o.interval_ms,
    })
}
