//! Loss per link-layer frame (the access model's `frame_loss`): where the
//! loss was applied below IP, as in a testbed whose emulator drops its own
//! link-layer frames, one lost frame takes every packet (or fragment of a
//! packet) carried in it, so IP sees bursts.
//!
//! Packets are packed into frames of `frame_bytes` back to back, in the
//! order they go on the air, each with its on-air size (header and
//! padding); a packet that does not fit is continued in the next frame, as
//! GSE and RLE fragment. A frame is closed (padded) when the link goes idle:
//! a packet whose transmission starts after the previous one ended opens a
//! new frame. A frame is lost when any of its `datagrams` draws of the
//! direction's loss model says so; a packet is lost when any frame it
//! touches is.
//!
//! Unpadded (`datagram_bytes`): the frame travels in one datagram per
//! `datagram_bytes` of its fill, so a frame with one small packet is one
//! datagram. Each datagram is drawn when the fill first reaches it, and a
//! lost one loses the packets from it to the end of the frame; the packets
//! before it keep their verdict, since each packet is decided on arrival,
//! before the frame's final size is known.
//!
//! Hold (`hold_frames`): OpenSAND numbers the datagrams of a channel and
//! delivers them in order; after a gap it holds the datagrams behind it
//! until more than `hold_frames` (its udp_stack, 5) are waiting, then skips
//! the lost number and delivers them all. So the packets of the frames
//! behind a lost frame are held until the `hold_frames + 1`-th of them
//! opens; its first packet passes, and the held ones go with it.
//!
//! Plain state, no I/O, no clock: the caller passes the times.

use crate::config::{Carriage, FrameLossConfig};

/// What becomes of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Lost,
    /// Delivered in its turn.
    Pass,
    /// Delivered with the next packet that passes.
    Held,
}

#[derive(Debug)]
pub struct FrameLoss {
    frame_bytes: usize,
    carriage: Carriage,
    /// Bytes used in the open frame.
    fill: usize,
    /// Datagrams of the open frame drawn so far (unpadded carriage).
    drawn: usize,
    /// In-order delivery: frames held behind a lost one before all go.
    hold: Option<u32>,
    /// Frames waiting behind a lost one; `None` when nothing waits.
    waiting: Option<u32>,
    open_lost: bool,
    last_end_ns: u64,
    frames: u64,
    frames_lost: u64,
}

impl FrameLoss {
    pub fn new(cfg: &FrameLossConfig) -> FrameLoss {
        FrameLoss {
            frame_bytes: cfg.frame_bytes as usize,
            carriage: cfg.carriage,
            fill: 0,
            drawn: 0,
            hold: cfg.hold_frames,
            waiting: None,
            open_lost: false,
            last_end_ns: 0,
            frames: 0,
            frames_lost: 0,
        }
    }

    fn open(&mut self, draw: &mut impl FnMut() -> bool) {
        self.open_lost = false;
        self.fill = 0;
        self.drawn = 0;
        self.frames += 1;
        if let Carriage::Padded { datagrams } = self.carriage {
            // Every datagram is drawn, lost or not, so that one frame always
            // takes the same number of draws from the loss model's stream.
            let mut lost = false;
            for _ in 0..datagrams {
                lost |= draw();
            }
            self.mark(lost);
        }
    }

    fn mark(&mut self, lost: bool) {
        if lost && !self.open_lost {
            self.open_lost = true;
            self.frames_lost += 1;
            if self.hold.is_some() && self.waiting.is_none() {
                self.waiting = Some(0);
            }
        }
    }

    /// The open frame's first bytes are in: with in-order delivery, an
    /// intact frame behind a lost one waits, and the one past the limit
    /// ends the wait, so its packet passes and the held ones with it.
    /// `lost`: the packet carrying those bytes is lost (it touched a lost
    /// frame before), so it cannot take them along and the next frame does.
    fn count_waiting(&mut self, lost: bool) {
        let (Some(hold), Some(n)) = (self.hold, self.waiting) else {
            return;
        };
        if self.open_lost {
            return;
        }
        self.waiting = if n < hold || lost {
            Some((n + 1).min(hold))
        } else {
            None
        };
    }

    /// Unpadded carriage: draws the datagrams the open frame's fill has
    /// reached and not yet drawn.
    fn draw_reached(&mut self, draw: &mut impl FnMut() -> bool) {
        let Carriage::Unpadded { datagram_bytes } = self.carriage else {
            return;
        };
        while self.drawn < self.fill.div_ceil(datagram_bytes as usize) {
            self.drawn += 1;
            let lost = draw();
            self.mark(lost);
        }
    }

    /// A packet of `air_bytes` on the air from `start_ns` to `end_ns`;
    /// `draw` is the direction's loss model.
    pub fn fate(
        &mut self,
        start_ns: u64,
        end_ns: u64,
        air_bytes: usize,
        mut draw: impl FnMut() -> bool,
    ) -> Fate {
        // No frame yet, or the link went idle: a new frame.
        let mut opened = false;
        if self.frames == 0 || start_ns > self.last_end_ns {
            self.open(&mut draw);
            opened = true;
        }
        self.last_end_ns = end_ns;
        let mut left = air_bytes.max(1);
        let mut lost = false;
        loop {
            if self.fill >= self.frame_bytes {
                self.open(&mut draw);
                opened = true;
                continue;
            }
            let take = left.min(self.frame_bytes - self.fill);
            self.fill += take;
            self.draw_reached(&mut draw);
            lost |= self.open_lost;
            if opened {
                opened = false;
                self.count_waiting(lost);
            }
            left -= take;
            if left == 0 {
                break;
            }
        }
        if lost {
            Fate::Lost
        } else if self.waiting.is_some() {
            Fate::Held
        } else {
            Fate::Pass
        }
    }

    /// Whether the packet is lost (tests that do not look at holding).
    #[cfg(test)]
    fn lose(&mut self, s: u64, e: u64, air: usize, draw: impl FnMut() -> bool) -> bool {
        self.fate(s, e, air, draw) == Fate::Lost
    }

    /// Frames opened so far, and how many of them were lost.
    pub fn counts(&self) -> (u64, u64) {
        (self.frames, self.frames_lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fl(frame_bytes: u32, datagrams: u32) -> FrameLoss {
        FrameLoss::new(&FrameLossConfig {
            frame_bytes,
            carriage: Carriage::Padded { datagrams },
            hold_frames: None,
        })
    }

    fn unpadded(frame_bytes: u32, datagram_bytes: u32) -> FrameLoss {
        FrameLoss::new(&FrameLossConfig {
            frame_bytes,
            carriage: Carriage::Unpadded { datagram_bytes },
            hold_frames: None,
        })
    }

    /// A loss model that loses exactly the draws whose index is listed.
    fn script(lost: &[usize]) -> impl FnMut() -> bool + '_ {
        let mut i = 0;
        move || {
            i += 1;
            lost.contains(&(i - 1))
        }
    }

    #[test]
    fn a_lost_frame_takes_every_packet_in_it() {
        // 4000-byte frames, 1000-byte packets back to back: 4 per frame.
        let mut f = fl(4000, 1);
        let mut draw = script(&[1]); // the second frame is lost
        let lost: Vec<bool> = (0..12u64)
            .map(|i| f.lose(i * 10, (i + 1) * 10, 1000, &mut draw))
            .collect();
        assert_eq!(
            lost,
            [false, false, false, false, true, true, true, true, false, false, false, false]
        );
        assert_eq!(f.counts(), (3, 1));
    }

    #[test]
    fn a_packet_across_two_frames_is_lost_with_either() {
        let mut f = fl(1000, 1);
        let mut draw = script(&[1]);
        assert!(!f.lose(0, 10, 600, &mut draw)); // frame 0: 600
        assert!(f.lose(10, 20, 600, &mut draw)); // 400 in frame 0, 200 in lost frame 1
        assert!(f.lose(20, 30, 600, &mut draw)); // frame 1, now at 800
        assert!(f.lose(30, 40, 600, &mut draw)); // 200 in frame 1, 400 in frame 2
        assert!(!f.lose(40, 50, 600, &mut draw)); // frame 2 only
        assert_eq!(f.counts(), (3, 1));
    }

    #[test]
    fn an_idle_link_closes_the_frame() {
        let mut f = fl(10_000, 1);
        let mut draw = script(&[0]);
        assert!(f.lose(0, 10, 100, &mut draw));
        assert!(f.lose(10, 20, 100, &mut draw)); // back to back: same frame
        assert!(!f.lose(25, 30, 100, &mut draw)); // after a gap: a new frame
        assert_eq!(f.counts(), (2, 1));
    }

    #[test]
    fn each_datagram_of_a_frame_is_drawn() {
        let mut f = fl(3000, 3);
        let mut n = 0;
        f.lose(0, 1, 100, || {
            n += 1;
            false
        });
        assert_eq!(n, 3);
        let mut f = fl(3000, 3);
        let mut draw = script(&[2]);
        assert!(f.lose(0, 1, 100, &mut draw), "the third datagram lost");
    }

    #[test]
    fn unpadded_frames_draw_one_datagram_per_datagram_bytes_of_fill() {
        // 6000-byte frames sent unpadded in datagrams of 1500 bytes: a lone
        // small packet is one datagram, a full frame four.
        let mut f = unpadded(6000, 1500);
        let mut n = 0;
        f.lose(0, 1, 100, || {
            n += 1;
            false
        });
        assert_eq!(n, 1, "a lone small packet: one datagram");
        let mut f = unpadded(6000, 1500);
        let mut n = 0;
        for i in 0..4u64 {
            f.lose(i, i + 1, 1500, || {
                n += 1;
                false
            });
        }
        assert_eq!(n, 4, "a full frame: four datagrams");
        assert_eq!(f.counts(), (1, 0));
    }

    #[test]
    fn unpadded_loss_takes_the_rest_of_the_frame_from_the_lost_datagram() {
        // 1000-byte packets back to back in 4000-byte frames, 1000-byte
        // datagrams: the third datagram of the first frame is lost.
        let mut f = unpadded(4000, 1000);
        let mut draw = script(&[2]);
        let lost: Vec<bool> = (0..8u64)
            .map(|i| f.lose(i * 10, (i + 1) * 10, 1000, &mut draw))
            .collect();
        assert_eq!(lost, [false, false, true, true, false, false, false, false]);
        assert_eq!(f.counts(), (2, 1));
    }

    #[test]
    fn frames_behind_a_lost_one_wait_until_more_than_hold_are_waiting() {
        // One 1000-byte packet per frame (idle between them), hold 2: frame
        // 1 is lost, frames 2 and 3 wait, frame 4 passes and takes them
        // along; then all pass again.
        let mut f = FrameLoss::new(&FrameLossConfig {
            frame_bytes: 1000,
            carriage: Carriage::Padded { datagrams: 1 },
            hold_frames: Some(2),
        });
        let mut draw = script(&[1, 3]); // frames 1 and 3 (the second held one) lost
        let fates: Vec<Fate> = (0..7u64)
            .map(|i| f.fate(i * 100, i * 100 + 10, 1000, &mut draw))
            .collect();
        use Fate::*;
        // Frame 3 is lost while waiting and does not count.
        assert_eq!(fates, [Pass, Lost, Held, Lost, Held, Pass, Pass]);
    }

    #[test]
    fn without_hold_nothing_waits() {
        let mut f = fl(1000, 1);
        let mut draw = script(&[1]);
        let fates: Vec<Fate> = (0..4u64)
            .map(|i| f.fate(i * 100, i * 100 + 10, 1000, &mut draw))
            .collect();
        assert_eq!(fates, [Fate::Pass, Fate::Lost, Fate::Pass, Fate::Pass]);
    }

    #[test]
    fn per_frame_rate_with_random_draws() {
        // With loss p per datagram and 4 datagrams a frame, about
        // 1 - (1 - p)^4 of the frames are lost.
        let mut rng = crate::rng::Rng::stream(3, "forward", "loss");
        let mut f = fl(5000, 4);
        for i in 0..200_000u64 {
            f.lose(i, i + 1, 1500, || rng.chance(0.01));
        }
        let (frames, lost) = f.counts();
        let rate = lost as f64 / frames as f64;
        assert!((rate - 0.0394).abs() < 0.004, "{rate}");
    }
}
