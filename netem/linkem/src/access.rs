//! The access stage: what a satellite access layer (DVB-S2 GSE on the
//! forward link, DVB-RCS2 RLE on the return link) does to a packet before
//! it goes on the air. Off unless a direction's config has `access`.
//!
//! - **Frame clock** (`frame_ms` F): the link sends frames of duration F
//!   back to back from time 0 (the moment linkem is ready). A packet is put
//!   into the frame that starts at the first boundary `k * F` at or after
//!   its arrival: it may start transmission no earlier than that boundary
//!   (and no earlier than the end of the packet before it, as on any rate
//!   limited link; a packet may straddle frames, as GSE and RLE fragment).
//!   An idle link therefore adds a wait uniform in [0, F).
//! - **Encapsulation overhead**: `header_bytes` are added to each packet,
//!   and with `pad_to_bytes` U the result is padded up to a whole number of
//!   U-byte units (a timeslot's or frame's payload): the packet is
//!   serialized at the link rate with that on-air size.
//! - **Demand assignment** (`dama`, return link): a constant rate
//!   (`cra_mbit`) is always available. A packet arriving after the link
//!   was idle for longer than `idle_release_ms` (or the first packet ever)
//!   makes the terminal send a capacity request at the next frame
//!   (superframe) boundary; the capacity is granted `request_grant_ms`
//!   later, at the first boundary at or after that instant. From then on
//!   the whole link rate is available, until the link has been idle for
//!   `idle_release_ms` again. Before the grant, packets are serialized at
//!   the CRA (with no CRA they wait for the grant). The rate in force at a
//!   packet's transmission start applies to the whole packet.
//!
//! Plain state, no I/O, no clock: the caller passes the time.

use crate::config::{AccessConfig, DamaConfig};

const MS: f64 = 1e6;

#[derive(Debug)]
pub struct AccessStage {
    frame_ns: Option<u64>,
    header_bytes: usize,
    pad_to_bytes: Option<usize>,
    dama: Option<Dama>,
}

#[derive(Debug)]
struct Dama {
    cra_bps: f64,
    request_grant_ns: u64,
    idle_release_ns: u64,
    /// When the capacity in force (or requested) becomes usable.
    granted_from_ns: Option<u64>,
    /// Arrival time of the last packet.
    last_arrival_ns: Option<u64>,
    requests: u64,
}

/// What the access stage decides for one packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    /// The earliest instant its transmission may start.
    pub earliest_start_ns: u64,
    /// Bytes on the air (packet + header, padded).
    pub air_bytes: usize,
    /// With demand assignment: the instant from which the full link rate is
    /// available; before it only the CRA is.
    pub granted_from_ns: Option<u64>,
    /// With demand assignment: the CRA in bit/s.
    pub cra_bps: Option<f64>,
}

fn ms_to_ns(ms: f64) -> u64 {
    (ms * MS).round() as u64
}

impl AccessStage {
    pub fn new(cfg: &AccessConfig) -> AccessStage {
        AccessStage {
            frame_ns: cfg.frame_ms.map(ms_to_ns).filter(|&f| f > 0),
            header_bytes: cfg.header_bytes as usize,
            pad_to_bytes: cfg.pad_to_bytes.map(|u| u as usize),
            dama: cfg.dama.as_ref().map(Dama::new),
        }
    }

    /// The first frame boundary at or after `t_ns` (`t_ns` without a frame
    /// clock).
    pub fn next_boundary(&self, t_ns: u64) -> u64 {
        match self.frame_ns {
            Some(f) => t_ns.div_ceil(f) * f,
            None => t_ns,
        }
    }

    /// Bytes on the air for an IP packet of `len` bytes.
    pub fn air_bytes(&self, len: usize) -> usize {
        let n = len + self.header_bytes;
        match self.pad_to_bytes {
            Some(u) if u > 0 => n.div_ceil(u) * u,
            _ => n,
        }
    }

    /// A packet of `len` bytes arrives at `now_ns`.
    pub fn on_packet(&mut self, now_ns: u64, len: usize) -> Access {
        let boundary = self.next_boundary(now_ns);
        let frame_ns = self.frame_ns;
        let align = |t: u64| match frame_ns {
            Some(f) => t.div_ceil(f) * f,
            None => t,
        };
        let (granted_from_ns, cra_bps) = match &mut self.dama {
            None => (None, None),
            Some(d) => (Some(d.on_arrival(now_ns, boundary, align)), Some(d.cra_bps)),
        };
        let mut earliest = boundary;
        if let (Some(g), Some(cra)) = (granted_from_ns, cra_bps) {
            if cra <= 0.0 {
                earliest = earliest.max(g);
            }
        }
        Access {
            earliest_start_ns: earliest,
            air_bytes: self.air_bytes(len),
            granted_from_ns,
            cra_bps,
        }
    }

    /// Capacity requests sent so far (demand assignment only).
    pub fn requests(&self) -> u64 {
        self.dama.as_ref().map_or(0, |d| d.requests)
    }
}

impl Dama {
    fn new(cfg: &DamaConfig) -> Dama {
        Dama {
            cra_bps: cfg.cra_mbit * 1e6,
            request_grant_ns: ms_to_ns(cfg.request_grant_ms),
            idle_release_ns: ms_to_ns(cfg.idle_release_ms),
            granted_from_ns: None,
            last_arrival_ns: None,
            requests: 0,
        }
    }

    /// Updates the grant state for an arrival at `now_ns` (`boundary`: the
    /// next frame boundary) and returns when the full rate is usable.
    fn on_arrival(&mut self, now_ns: u64, boundary: u64, align: impl Fn(u64) -> u64) -> u64 {
        let idle = match self.last_arrival_ns {
            None => true,
            Some(last) => now_ns.saturating_sub(last) > self.idle_release_ns,
        };
        if idle || self.granted_from_ns.is_none() {
            // The request goes up in the next superframe; the grant applies
            // from the first superframe after the request-grant delay.
            self.granted_from_ns = Some(align(boundary + self.request_grant_ns));
            self.requests += 1;
        }
        self.last_arrival_ns = Some(now_ns);
        self.granted_from_ns.unwrap_or(boundary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSN: u64 = 1_000_000;

    fn cfg(frame_ms: Option<f64>, header: u32, pad: Option<u32>) -> AccessConfig {
        AccessConfig {
            frame_ms,
            header_bytes: header,
            pad_to_bytes: pad,
            dama: None,
            frame_loss: None,
        }
    }

    fn dama(cra_mbit: f64, rg_ms: f64, idle_ms: f64) -> AccessConfig {
        AccessConfig {
            frame_ms: Some(10.0),
            header_bytes: 0,
            pad_to_bytes: None,
            dama: Some(DamaConfig {
                cra_mbit,
                request_grant_ms: rg_ms,
                idle_release_ms: idle_ms,
            }),
            frame_loss: None,
        }
    }

    #[test]
    fn packets_leave_on_frame_boundaries() {
        let mut a = AccessStage::new(&cfg(Some(10.0), 0, None));
        assert_eq!(a.on_packet(0, 100).earliest_start_ns, 0);
        assert_eq!(a.on_packet(1, 100).earliest_start_ns, 10 * MSN);
        assert_eq!(a.on_packet(10 * MSN, 100).earliest_start_ns, 10 * MSN);
        assert_eq!(a.on_packet(10 * MSN + 1, 100).earliest_start_ns, 20 * MSN);
        assert_eq!(a.on_packet(29_999_999, 100).earliest_start_ns, 30 * MSN);
        // Fractional frame durations stay exact in ns: 26.5 ms.
        let a = AccessStage::new(&cfg(Some(26.5), 0, None));
        assert_eq!(a.next_boundary(30 * MSN), 53 * MSN);
        assert_eq!(a.next_boundary(53 * MSN), 53 * MSN);
    }

    #[test]
    fn without_a_frame_clock_packets_leave_at_once() {
        let mut a = AccessStage::new(&cfg(None, 0, None));
        assert_eq!(a.on_packet(12_345, 100).earliest_start_ns, 12_345);
        assert_eq!(a.on_packet(12_345, 100).granted_from_ns, None);
    }

    #[test]
    fn overhead_and_padding() {
        let a = AccessStage::new(&cfg(None, 10, None));
        assert_eq!(a.air_bytes(1500), 1510);
        assert_eq!(a.air_bytes(40), 50);
        let a = AccessStage::new(&cfg(None, 6, Some(100)));
        assert_eq!(a.air_bytes(40), 100);
        assert_eq!(a.air_bytes(94), 100);
        assert_eq!(a.air_bytes(95), 200);
        assert_eq!(a.air_bytes(1500), 1600);
        let a = AccessStage::new(&cfg(None, 0, None));
        assert_eq!(a.air_bytes(1500), 1500);
    }

    #[test]
    fn an_idle_terminal_asks_and_waits_for_its_grant() {
        // Superframe 10 ms, grant 500 ms after the request, released after
        // 200 ms without traffic.
        let mut a = AccessStage::new(&dama(1.0, 500.0, 200.0));
        let first = a.on_packet(3 * MSN, 60);
        // Request in the superframe at 10 ms, grant usable from 510 ms.
        assert_eq!(first.earliest_start_ns, 10 * MSN);
        assert_eq!(first.granted_from_ns, Some(510 * MSN));
        assert_eq!(first.cra_bps, Some(1e6));
        assert_eq!(a.requests(), 1);
        // Traffic keeps coming: no new request, the same grant.
        for t in [50, 200, 390, 589] {
            assert_eq!(a.on_packet(t * MSN, 1500).granted_from_ns, Some(510 * MSN));
        }
        assert_eq!(a.requests(), 1);
        // Idle for more than 200 ms: the grant was released; ask again.
        let again = a.on_packet(790 * MSN, 1500);
        assert_eq!(again.granted_from_ns, Some(1290 * MSN));
        assert_eq!(a.requests(), 2);
        // Exactly 200 ms idle still holds it.
        assert_eq!(
            a.on_packet(990 * MSN, 100).granted_from_ns,
            Some(1290 * MSN)
        );
        assert_eq!(a.requests(), 2);
    }

    #[test]
    fn the_grant_starts_on_a_superframe() {
        let mut a = AccessStage::new(&dama(0.5, 33.0, 100.0));
        // Request at 10 ms; 43 ms is inside a superframe: from 50 ms.
        assert_eq!(a.on_packet(MSN, 60).granted_from_ns, Some(50 * MSN));
    }

    #[test]
    fn without_cra_a_packet_waits_for_the_grant() {
        let mut a = AccessStage::new(&dama(0.0, 500.0, 1000.0));
        let p = a.on_packet(MSN, 60);
        assert_eq!(p.earliest_start_ns, 510 * MSN);
        // Once granted, packets go at the next boundary.
        assert_eq!(a.on_packet(601 * MSN, 60).earliest_start_ns, 610 * MSN);
    }
}
