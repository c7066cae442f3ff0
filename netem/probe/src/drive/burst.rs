//! `satprobe burst`: silence, then datagrams back to back, each one's
//! one-way delay (`satprobe::burst`).

use satprobe::cli::BurstOpts;
use satprobe::{burst, first_arrival, ns_to_ms};
use serde::Serialize;

use super::udp::{bind_receiver, connect_sender, receive_until_done, send, send_while_receiving};
use super::{LEAD_NS, RATE_SNDBUF, SMALL_RCVBUF};
use crate::sys;

#[derive(Serialize)]
pub struct BurstOut {
    sent: u64,
    received: u64,
    lost: u64,
    packet_bytes: usize,
    idle_ms: u64,
    /// When each datagram left, ms after the first did.
    send_ms: Vec<f64>,
    /// Each datagram's one-way delay in send order, `null` if it was lost.
    owd_ms: Vec<Option<f64>>,
}

pub fn run(o: &BurstOpts) -> Result<BurstOut, String> {
    let c = &o.common;
    let rx = bind_receiver(c)?;
    let _ = sys::grow_buffer(&rx, true, SMALL_RCVBUF);
    let tx = connect_sender(c)?;
    let _ = sys::grow_buffer(&tx, false, RATE_SNDBUF);
    sys::precise_timers();
    // Nothing is sent before the burst: the sockets are silent for idle_ms.
    let start_ns = sys::now_ns() + (o.idle_ms * 1_000_000).max(LEAD_NS);

    let receive = |finish: &_| -> Result<Vec<(u64, u64)>, String> {
        let mut got = Vec::with_capacity(o.packets as usize);
        let mut seen = vec![false; o.packets as usize];
        let mut buf = vec![0u8; 65_536];
        receive_until_done(&rx, &mut buf, finish, |b, t| match burst::decode(b) {
            Some(i) => {
                got.push((i, t));
                first_arrival(&mut seen, i)
            }
            None => false,
        })
        .map_err(|e| format!("receiving in netns {}: {e}", c.to_netns))?;
        Ok(got)
    };
    let send_all = || -> Result<(u64, Vec<u64>), String> {
        let mut payload = vec![0u8; o.payload_bytes()];
        let mut send_ns = Vec::with_capacity(o.packets as usize);
        sys::sleep_until(start_ns);
        for i in 0..o.packets {
            burst::encode(&mut payload, i);
            // Timestamp before the send, as owd does.
            send_ns.push(sys::now_ns());
            send(&tx, &payload, c)?;
        }
        Ok((o.packets, send_ns))
    };
    let (send_ns, receipts) = send_while_receiving(c.timeout_ms, "receiver", receive, send_all)?;

    let delays = burst::delays(&send_ns, &receipts);
    let received = delays.iter().flatten().count() as u64;
    let first = send_ns.first().copied().unwrap_or(0);
    Ok(BurstOut {
        sent: send_ns.len() as u64,
        received,
        lost: send_ns.len() as u64 - received,
        packet_bytes: o.packet_bytes,
        idle_ms: o.idle_ms,
        send_ms: send_ns.iter().map(|&t| ns_to_ms(t - first)).collect(),
        owd_ms: delays.into_iter().map(|d| d.map(ns_to_ms)).collect(),
    })
}
