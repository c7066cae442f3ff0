//! Counting a paced UDP flood at the receiver, and the rate it shows.

use crate::cli::IP_UDP_OVERHEAD;

/// First bytes of each rate payload ("SPRT"), then the sequence number as a
/// big-endian u64, then padding.
pub const MAGIC: [u8; 4] = *b"SPRT";

/// Writes the header into a payload buffer (at least 12 bytes).
pub fn encode(buf: &mut [u8], seq: u64) {
    buf[..4].copy_from_slice(&MAGIC);
    buf[4..12].copy_from_slice(&seq.to_be_bytes());
}

/// The sequence number of a rate payload, or `None` for anything else.
pub fn decode(payload: &[u8]) -> Option<u64> {
    if payload.len() < 12 || payload[..4] != MAGIC {
        return None;
    }
    Some(u64::from_be_bytes(payload[4..12].try_into().unwrap()))
}

/// What the receiver saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RxCount {
    pub packets: u64,
    /// Sum of IP packet sizes (UDP payload + 28).
    pub ip_bytes: u64,
    /// Arrival time and IP size of the first packet.
    pub first: Option<(u64, u64)>,
    pub last_ns: u64,
}

impl RxCount {
    /// Counts one datagram of `payload_len` bytes that arrived at `t_ns`.
    pub fn add(&mut self, payload_len: usize, t_ns: u64) {
        let ip = (payload_len + IP_UDP_OVERHEAD) as u64;
        self.packets += 1;
        self.ip_bytes += ip;
        if self.first.is_none() {
            self.first = Some((t_ns, ip));
        }
        self.last_ns = t_ns;
    }

    /// The rate the path delivered while busy, in Mbit/s (IP layer):
    /// every byte after the first packet, over the time from the first
    /// arrival to the last. The first packet's bytes are left out because
    /// its arrival starts the clock. `None` with fewer than two arrivals
    /// (or all at one instant).
    pub fn delivered_mbps(&self) -> Option<f64> {
        let (first_ns, first_bytes) = self.first?;
        if self.packets < 2 || self.last_ns <= first_ns {
            return None;
        }
        let secs = (self.last_ns - first_ns) as f64 / 1e9;
        Some((self.ip_bytes - first_bytes) as f64 * 8.0 / secs / 1e6)
    }
}

/// Rate the sender achieved, in Mbit/s: IP bytes of every packet after the
/// first over the span from the first send to the last.
pub fn sent_mbps(packets: u64, packet_bytes: usize, first_ns: u64, last_ns: u64) -> Option<f64> {
    if packets < 2 || last_ns <= first_ns {
        return None;
    }
    Some(
        (packets - 1) as f64 * packet_bytes as f64 * 8.0
            / ((last_ns - first_ns) as f64 / 1e9)
            / 1e6,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut buf = [0u8; 1472];
        encode(&mut buf, 0x0102_0304_0506_0708);
        assert_eq!(decode(&buf), Some(0x0102_0304_0506_0708));
        assert_eq!(decode(&buf[..11]), None);
        assert_eq!(decode(b"XXXX00000000"), None);
    }

    #[test]
    fn twenty_mbit_link() {
        // 1500-byte packets arriving every 600 us = 20 Mbit/s.
        let mut c = RxCount::default();
        for i in 0..1000u64 {
            c.add(1472, 1_000_000 + i * 600_000);
        }
        assert_eq!(c.packets, 1000);
        assert_eq!(c.ip_bytes, 1_500_000);
        assert_eq!(c.first, Some((1_000_000, 1500)));
        assert_eq!(c.last_ns, 1_000_000 + 999 * 600_000);
        let mbps = c.delivered_mbps().unwrap();
        assert!((mbps - 20.0).abs() < 1e-9, "{mbps}");
    }

    #[test]
    fn counts_the_actual_sizes() {
        let mut c = RxCount::default();
        c.add(972, 0); // 1000 B, excluded
        c.add(472, 1_000_000); // 500 B
        c.add(1472, 2_000_000); // 1500 B
                                // 2000 B in 2 ms = 8 Mbit/s
        assert!((c.delivered_mbps().unwrap() - 8.0).abs() < 1e-9);
        assert_eq!(c.ip_bytes, 3000);
    }

    #[test]
    fn not_enough_arrivals() {
        let mut c = RxCount::default();
        assert_eq!(c.delivered_mbps(), None);
        c.add(100, 5);
        assert_eq!(c.delivered_mbps(), None);
        c.add(100, 5);
        assert_eq!(c.delivered_mbps(), None);
    }

    #[test]
    fn sender_rate() {
        assert!((sent_mbps(25_001, 1500, 0, 1_000_000_000).unwrap() - 300.0).abs() < 1e-9);
        assert_eq!(sent_mbps(1, 1500, 0, 0), None);
    }
}
