//! The loss stage: no loss, random (Bernoulli) loss, or netem's
//! Gilbert–Elliott model, each drawing from its own seeded stream.

use crate::config::LossModel;
use crate::rng::Rng;

#[derive(Debug)]
pub enum LossStage {
    None,
    Random {
        p: f64,
        rng: Rng,
    },
    /// Probabilities in 0..=1: `p` good->bad, `r` bad->good, `h` loss in
    /// the bad state, `k` loss in the good state.
    GilbertElliott {
        p: f64,
        r: f64,
        h: f64,
        k: f64,
        bad: bool,
        rng: Rng,
    },
}

impl LossStage {
    pub fn new(model: Option<&LossModel>, rng: Rng) -> LossStage {
        match model {
            None => LossStage::None,
            Some(LossModel::Random { pct }) => LossStage::Random {
                p: pct / 100.0,
                rng,
            },
            Some(LossModel::GilbertElliott {
                p_pct,
                r_pct,
                h_loss_pct,
                k_loss_pct,
            }) => LossStage::GilbertElliott {
                p: p_pct / 100.0,
                r: r_pct / 100.0,
                h: h_loss_pct / 100.0,
                k: k_loss_pct / 100.0,
                bad: false,
                rng,
            },
        }
    }

    /// Decides whether the next packet is lost.
    pub fn lose(&mut self) -> bool {
        match self {
            LossStage::None => false,
            LossStage::Random { p, rng } => rng.chance(*p),
            // As netem's loss_gilb_ell(): first the state transition is
            // drawn, then the loss, with the probability of the state the
            // packet arrived in.
            LossStage::GilbertElliott {
                p,
                r,
                h,
                k,
                bad,
                rng,
            } => {
                if *bad {
                    if rng.chance(*r) {
                        *bad = false;
                    }
                    rng.chance(*h)
                } else {
                    if rng.chance(*p) {
                        *bad = true;
                    }
                    rng.chance(*k)
                }
            }
        }
    }

    /// The long-run loss probability (for documentation and tests).
    pub fn stationary_loss(&self) -> f64 {
        match self {
            LossStage::None => 0.0,
            LossStage::Random { p, .. } => *p,
            LossStage::GilbertElliott { p, r, h, k, .. } => {
                if p + r == 0.0 {
                    *k // never leaves the good state
                } else {
                    (r * k + p * h) / (p + r)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(stage: &mut LossStage, n: usize) -> Vec<bool> {
        (0..n).map(|_| stage.lose()).collect()
    }

    #[test]
    fn no_loss_never_loses() {
        let mut s = LossStage::new(None, Rng::new(1));
        assert!(!pattern(&mut s, 1000).iter().any(|&l| l));
    }

    #[test]
    fn random_loss_frequency_is_within_a_binomial_bound() {
        let n = 200_000usize;
        for (pct, seed) in [(1.0, 42u64), (0.1, 7), (10.0, 3), (50.0, 99)] {
            let mut s = LossStage::new(
                Some(&LossModel::Random { pct }),
                Rng::stream(seed, "forward", "loss"),
            );
            let lost = pattern(&mut s, n).iter().filter(|&&l| l).count() as f64;
            let p = pct / 100.0;
            let mean = n as f64 * p;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (lost - mean).abs() < 5.0 * sd,
                "pct {pct}: lost {lost}, expected {mean} +- {sd}"
            );
        }
    }

    #[test]
    fn same_seed_same_pattern_other_seed_other_pattern() {
        let m = LossModel::Random { pct: 5.0 };
        let a = pattern(
            &mut LossStage::new(Some(&m), Rng::stream(42, "forward", "loss")),
            5000,
        );
        let b = pattern(
            &mut LossStage::new(Some(&m), Rng::stream(42, "forward", "loss")),
            5000,
        );
        let c = pattern(
            &mut LossStage::new(Some(&m), Rng::stream(43, "forward", "loss")),
            5000,
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn zero_and_hundred_percent_are_exact() {
        let mut s = LossStage::new(Some(&LossModel::Random { pct: 0.0 }), Rng::new(1));
        assert!(!pattern(&mut s, 10_000).iter().any(|&l| l));
        let mut s = LossStage::new(Some(&LossModel::Random { pct: 100.0 }), Rng::new(1));
        assert!(pattern(&mut s, 10_000).iter().all(|&l| l));
    }

    fn bursts(p: &[bool]) -> Vec<usize> {
        let mut out = vec![];
        let mut run = 0;
        for &l in p {
            if l {
                run += 1;
            } else if run > 0 {
                out.push(run);
                run = 0;
            }
        }
        if run > 0 {
            out.push(run);
        }
        out
    }

    #[test]
    fn gilbert_elliott_mean_loss_and_burst_length() {
        // Simple Gilbert (h = 100 %, k = 0): loss = p / (p + r), bursts of
        // mean length 1 / r.
        let m = LossModel::GilbertElliott {
            p_pct: 1.7,
            r_pct: 30.0,
            h_loss_pct: 100.0,
            k_loss_pct: 0.0,
        };
        let mut s = LossStage::new(Some(&m), Rng::stream(42, "return", "loss"));
        let expect = 0.017 / (0.017 + 0.30);
        assert!((s.stationary_loss() - expect).abs() < 1e-12);
        let n = 1_000_000;
        let pat = pattern(&mut s, n);
        let rate = pat.iter().filter(|&&l| l).count() as f64 / n as f64;
        assert!(
            (rate - expect).abs() < 0.05 * expect,
            "loss {rate} vs {expect}"
        );
        let b = bursts(&pat);
        let mean_burst = b.iter().sum::<usize>() as f64 / b.len() as f64;
        assert!(
            (mean_burst - 1.0 / 0.30).abs() < 0.05 / 0.30,
            "mean burst {mean_burst}"
        );
        // Bursty: far more multi-packet bursts than random loss at the same rate.
        let mut rnd = LossStage::new(
            Some(&LossModel::Random {
                pct: expect * 100.0,
            }),
            Rng::new(5),
        );
        let rb = bursts(&pattern(&mut rnd, n));
        let rnd_mean = rb.iter().sum::<usize>() as f64 / rb.len() as f64;
        assert!(
            mean_burst > 2.5 * rnd_mean,
            "GE {mean_burst} vs random {rnd_mean}"
        );
    }

    #[test]
    fn gilbert_elliott_with_partial_loss_in_both_states() {
        let m = LossModel::GilbertElliott {
            p_pct: 5.0,
            r_pct: 20.0,
            h_loss_pct: 60.0,
            k_loss_pct: 2.0,
        };
        let mut s = LossStage::new(Some(&m), Rng::stream(1, "forward", "loss"));
        let expect = (0.20 * 0.02 + 0.05 * 0.60) / (0.05 + 0.20);
        let n = 1_000_000;
        let rate = pattern(&mut s, n).iter().filter(|&&l| l).count() as f64 / n as f64;
        assert!(
            (rate - expect).abs() < 0.03 * expect,
            "loss {rate} vs {expect}"
        );
    }

    #[test]
    fn the_documented_profile_loses_about_1_8_percent() {
        let m = LossModel::GilbertElliott {
            p_pct: 1.7,
            r_pct: 93.5,
            h_loss_pct: 100.0,
            k_loss_pct: 0.0,
        };
        let mut s = LossStage::new(Some(&m), Rng::stream(42, "forward", "loss"));
        let expect = s.stationary_loss();
        assert!((expect - 0.017 / 0.952).abs() < 1e-12);
        let n = 1_000_000;
        let rate = pattern(&mut s, n).iter().filter(|&&l| l).count() as f64 / n as f64;
        assert!(
            (rate - expect).abs() < 0.05 * expect,
            "loss {rate} vs {expect}"
        );
    }
}
