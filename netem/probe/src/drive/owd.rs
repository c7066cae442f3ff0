//! `satprobe owd`: one-byte datagrams, timed as they leave and as they
//! arrive, matched to their sends afterwards (`satprobe::owd`).

use satprobe::cli::{OwdOpts, OWD_SEQ_SPACE};
use satprobe::schedule::Schedule;
use satprobe::{ns_to_ms, owd};
use serde::Serialize;

use super::udp::{bind_receiver, connect_sender, receive_until_done, send, send_while_receiving};
use super::{LEAD_NS, SMALL_RCVBUF};
use crate::sys;

#[derive(Serialize)]
pub struct OwdOut {
    sent: u64,
    received: u64,
    owd_ms: Vec<f64>,
    lost: u64,
    /// Datagrams that arrived but matched no send (duplicates, strays).
    unmatched: u64,
}

pub fn run(o: &OwdOpts) -> Result<OwdOut, String> {
    let c = &o.common;
    let rx = bind_receiver(c)?;
    let _ = sys::grow_buffer(&rx, true, SMALL_RCVBUF);
    let tx = connect_sender(c)?;
    sys::precise_timers();

    let receive = |finish: &_| -> Result<Vec<(u8, u64)>, String> {
        let mut got = Vec::with_capacity(o.count as usize);
        let mut buf = [0u8; 2048];
        receive_until_done(&rx, &mut buf, finish, |b, t| {
            if b.len() == 1 {
                got.push((b[0], t));
                true
            } else {
                false
            }
        })
        .map_err(|e| format!("receiving in netns {}: {e}", c.to_netns))?;
        Ok(got)
    };
    let send_all = || -> Result<(u64, Vec<u64>), String> {
        let sched = Schedule::every(sys::now_ns() + LEAD_NS, o.interval_ms, o.count);
        let mut send_ns = Vec::with_capacity(o.count as usize);
        for i in 0..o.count {
            sys::sleep_until(sched.due_ns(i));
            // Timestamp before the send: on a veth the datagram can reach
            // the receiver before send() returns.
            send_ns.push(sys::now_ns());
            send(&tx, &[(i % OWD_SEQ_SPACE) as u8], c)?;
        }
        Ok((o.count, send_ns))
    };
    let (send_ns, receipts) = send_while_receiving(c.timeout_ms, "receiver", receive, send_all)?;

    let horizon_ns = (o.interval_ms * 1e6 * OWD_SEQ_SPACE as f64) as u64;
    let m = owd::match_receipts(&send_ns, &receipts, horizon_ns);
    let sent = send_ns.len() as u64;
    Ok(OwdOut {
        sent,
        received: m.received(),
        owd_ms: m.delays.iter().map(|&(_, d)| ns_to_ms(d)).collect(),
        lost: sent - m.received(),
        unmatched: m.unmatched,
    })
}
