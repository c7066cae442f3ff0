//! `satprobe rate`: datagrams paced at the asked rate, counted as they
//! arrive (`satprobe::rate`).

use satprobe::cli::RateOpts;
use satprobe::rate;
use satprobe::schedule::Schedule;
use serde::Serialize;

use super::udp::{bind_receiver, connect_sender, receive_until_done, send, send_while_receiving};
use super::{LEAD_NS, RATE_RCVBUF, RATE_SNDBUF};
use crate::sys;

#[derive(Serialize)]
pub struct RateOut {
    sent_packets: u64,
    received_packets: u64,
    received_ip_bytes: u64,
    /// Seconds from the first scheduled send to the first / last arrival.
    first_rx_s: Option<f64>,
    last_rx_s: Option<f64>,
    /// Delivered rate while busy, Mbit/s at the IP layer.
    mbps: Option<f64>,
    /// What the sender achieved, Mbit/s at the IP layer (first to last send).
    sent_mbps: Option<f64>,
}

pub fn run(o: &RateOpts) -> Result<RateOut, String> {
    let c = &o.common;
    let rx = bind_receiver(c)?;
    sys::grow_buffer(&rx, true, RATE_RCVBUF).map_err(|e| format!("receive buffer: {e}"))?;
    let tx = connect_sender(c)?;
    sys::grow_buffer(&tx, false, RATE_SNDBUF).map_err(|e| format!("send buffer: {e}"))?;
    sys::precise_timers();

    let sched = Schedule::for_rate(
        sys::now_ns() + LEAD_NS,
        o.mbit,
        o.packet_bytes,
        o.duration_ms,
    );
    let receive = |finish: &_| -> Result<rate::RxCount, String> {
        let mut count = rate::RxCount::default();
        let mut buf = vec![0u8; 65_536];
        receive_until_done(&rx, &mut buf, finish, |b, t| {
            if rate::decode(b).is_some() {
                count.add(b.len(), t);
                true
            } else {
                false
            }
        })
        .map_err(|e| format!("receiving in netns {}: {e}", c.to_netns))?;
        Ok(count)
    };
    let send_all = || -> Result<(u64, (u64, u64, u64)), String> {
        let mut payload = vec![0u8; o.payload_bytes()];
        let (mut sent, mut first_tx, mut last_tx) = (0u64, 0u64, 0u64);
        'sending: while let Some(wake) = sched.next_wake_ns(sent) {
            sys::sleep_until(wake);
            let now = sys::now_ns();
            if sched.overrun(now) {
                break; // could not keep up: stop at the asked duration
            }
            let due = sched.due_count(now);
            while sent < due {
                rate::encode(&mut payload, sent);
                send(&tx, &payload, c)?;
                last_tx = sys::now_ns();
                if sent == 0 {
                    first_tx = last_tx;
                }
                sent += 1;
                if sched.overrun(last_tx) {
                    break 'sending; // could not keep up
                }
            }
        }
        Ok((sent, (sent, first_tx, last_tx)))
    };
    let ((sent, first_tx, last_tx), count) =
        send_while_receiving(c.timeout_ms, "receiver", receive, send_all)?;

    let rel_s = |t: u64| t.saturating_sub(sched.start_ns) as f64 / 1e9;
    Ok(RateOut {
        sent_packets: sent,
        received_packets: count.packets,
        received_ip_bytes: count.ip_bytes,
        first_rx_s: count.first.map(|(t, _)| rel_s(t)),
        last_rx_s: count.first.map(|_| rel_s(count.last_ns)),
        mbps: count.delivered_mbps(),
        sent_mbps: rate::sent_mbps(sent, o.packet_bytes, first_tx, last_tx),
    })
}
