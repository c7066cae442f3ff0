//! The delay stage: a constant (or scheduled) delay plus jitter drawn from
//! one of netem's distributions: `delay + jitter * X`, clamped at >= 0.
//!
//! X follows netem's meanings:
//! - `uniform`: uniform on [-1, 1) (netem without a table);
//! - `normal`: standard normal (iproute2's normal.dist);
//! - `pareto`: Pareto with a = 3, shifted to mean 0 and scaled by 4/3
//!   (iproute2's pareto.c: `(u^(-1/3) - 1.5) * 4/3`);
//! - `paretonormal`: `(normal + 3 * pareto) / 4` taken at the same quantile
//!   (iproute2's paretonormal.c builds its table that way).
//!
//! netem stores X as a signed 16-bit value scaled by 8192, so it never
//! leaves [-4, 32767/8192]; we clamp X to the same range. The draw is
//! computed by inverse CDF from one uniform, not from a 4096-entry table.

use crate::config::Distribution;
use crate::rng::Rng;

/// netem's bounds on X (NETEM_DIST_SCALE = 8192, table entries are s16).
pub const X_MIN: f64 = -32768.0 / 8192.0;
pub const X_MAX: f64 = 32767.0 / 8192.0;

/// Inverse of the standard normal CDF (Acklam's rational approximation,
/// without refinement: error below 1e-5 relative, plenty for jitter), for 0 < q < 1.
pub fn inverse_normal_cdf(q: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e+01,
        2.209460984245205e+02,
        -2.759285104469687e+02,
        1.38357751867269e+02,
        -3.066479806614716e+01,
        2.506628277459239e+00,
    ];
    const B: [f64; 5] = [
        -5.447609879822406e+01,
        1.615858368580409e+02,
        -1.556989798598866e+02,
        6.680131188771972e+01,
        -1.328068155288572e+01,
    ];
    const C: [f64; 6] = [
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e+00,
        -2.54967101024372e+00,
        4.374664141464968e+00,
        2.938163982698783e+00,
    ];
    const D: [f64; 4] = [
        7.784695709041462e-03,
        3.224671290700398e-01,
        2.445134137142996e+00,
        3.754408661907416e+00,
    ];
    const LOW: f64 = 0.02425;
    if q < LOW {
        let r = (-2.0 * q.ln()).sqrt();
        (((((C[0] * r + C[1]) * r + C[2]) * r + C[3]) * r + C[4]) * r + C[5])
            / ((((D[0] * r + D[1]) * r + D[2]) * r + D[3]) * r + 1.0)
    } else if q <= 1.0 - LOW {
        let u = q - 0.5;
        let r = u * u;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * u
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -inverse_normal_cdf(1.0 - q)
    }
}

/// netem's Pareto quantile (a = 3, mean 0), before clamping.
fn pareto_quantile(q: f64) -> f64 {
    ((1.0 - q).powf(-1.0 / 3.0) - 1.5) * (4.0 / 3.0)
}

/// X for quantile `q` (0 < q < 1) of distribution `d`, clamped as netem's.
pub fn quantile(d: Distribution, q: f64) -> f64 {
    let x = match d {
        Distribution::Uniform => 2.0 * q - 1.0,
        Distribution::Normal => inverse_normal_cdf(q),
        Distribution::Pareto => pareto_quantile(q).min(X_MAX),
        Distribution::ParetoNormal => {
            (inverse_normal_cdf(q).clamp(X_MIN, X_MAX) + 3.0 * pareto_quantile(q).min(X_MAX)) / 4.0
        }
    };
    x.clamp(X_MIN, X_MAX)
}

#[derive(Debug)]
pub struct DelayStage {
    jitter_ns: f64,
    dist: Distribution,
    rng: Rng,
}

impl DelayStage {
    pub fn new(jitter_ms: f64, dist: Distribution, rng: Rng) -> DelayStage {
        DelayStage {
            jitter_ns: jitter_ms * 1e6,
            dist,
            rng,
        }
    }

    /// One draw of X (mean 0) from the configured distribution.
    pub fn draw_x(&mut self) -> f64 {
        quantile(self.dist, self.rng.next_open01())
    }

    /// The delay for one packet, in ns, given the delay in force.
    pub fn sample_ns(&mut self, delay_ms: f64) -> u64 {
        let mut d = delay_ms * 1e6;
        if self.jitter_ns > 0.0 {
            d += self.jitter_ns * self.draw_x();
        }
        if d <= 0.0 {
            0
        } else {
            d.round() as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    /// Mean and sd of X by numerical integration over the quantile.
    fn exact_moments(d: Distribution) -> (f64, f64) {
        let n = 2_000_000;
        let xs: Vec<f64> = (0..n)
            .map(|i| quantile(d, (i as f64 + 0.5) / n as f64))
            .collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        (mean, var.sqrt())
    }

    #[test]
    fn inverse_normal_is_accurate() {
        assert!(inverse_normal_cdf(0.5).abs() < 1e-9);
        assert!((inverse_normal_cdf(0.975) - 1.959963984540054).abs() < 1e-5);
        assert!((inverse_normal_cdf(0.025) + 1.959963984540054).abs() < 1e-5);
        assert!((inverse_normal_cdf(0.8413447460685429) - 1.0).abs() < 1e-5);
        let x = inverse_normal_cdf(0.001);
        assert!((x + 3.090232306167813).abs() < 3e-5, "{x}");
    }

    #[test]
    fn distributions_have_the_expected_mean_and_sd() {
        let n = 400_000;
        let cases = [
            (Distribution::Uniform, 0.0, 1.0 / 3f64.sqrt()),
            (Distribution::Normal, 0.0, 1.0),
            (Distribution::Pareto, f64::NAN, f64::NAN),
            (Distribution::ParetoNormal, f64::NAN, f64::NAN),
        ];
        for (d, mut em, mut esd) in cases {
            let (nm, nsd) = exact_moments(d);
            if em.is_nan() {
                em = nm;
                esd = nsd;
            } else {
                assert!(
                    (nm - em).abs() < 1e-3 && (nsd - esd).abs() < 1e-3,
                    "{d:?}: integration {nm} {nsd}"
                );
            }
            let mut s = DelayStage::new(1.0, d, Rng::stream(42, "forward", "jitter"));
            let xs: Vec<f64> = (0..n).map(|_| s.draw_x()).collect();
            let (m, sd) = moments(&xs);
            // Standard error of the mean is sd/sqrt(n) ~ 0.0017; allow 5 of them.
            assert!(
                (m - em).abs() < 5.0 * esd / (n as f64).sqrt(),
                "{d:?}: mean {m} vs {em}"
            );
            assert!((sd - esd).abs() < 0.02 * esd, "{d:?}: sd {sd} vs {esd}");
            assert!(xs.iter().all(|&x| (X_MIN..=X_MAX).contains(&x)));
        }
        // Pareto's known shape: mean 0 before the clip at ~4, which takes
        // E[(X - 4)+] = (4/3) / (2 * 4.5^2) ~ 0.033 off it; heavy right tail.
        let (pm, psd) = exact_moments(Distribution::Pareto);
        assert!(pm < -0.025 && pm > -0.04, "pareto mean {pm}");
        // sd: 4/3 * sqrt(Var[min(Y, 4.5)]) for Y ~ Pareto(1, 3) = 0.822 (1.155 unclipped).
        assert!((psd - 0.822).abs() < 0.005, "pareto sd {psd}");
        assert!(quantile(Distribution::Pareto, 0.0000001) > -0.67);
        assert_eq!(quantile(Distribution::Pareto, 0.99999), X_MAX);
    }

    #[test]
    fn delay_plus_jitter_in_ns_clamped_at_zero() {
        let mut s = DelayStage::new(0.0, Distribution::Normal, Rng::new(1));
        assert_eq!(s.sample_ns(250.0), 250_000_000);
        assert_eq!(s.sample_ns(0.0125), 12_500);
        let mut s = DelayStage::new(10.0, Distribution::Uniform, Rng::new(1));
        for _ in 0..10_000 {
            let d = s.sample_ns(5.0);
            assert!(d <= 15_000_000);
        }
        let zeros = (0..10_000).filter(|_| s.sample_ns(5.0) == 0).count();
        assert!(
            zeros > 2000 && zeros < 3000,
            "{zeros} clamped of 10000 (expect ~25 %)"
        );
    }

    #[test]
    fn jitter_is_reproducible_for_a_seed() {
        let mut a = DelayStage::new(
            20.0,
            Distribution::ParetoNormal,
            Rng::stream(9, "return", "jitter"),
        );
        let mut b = DelayStage::new(
            20.0,
            Distribution::ParetoNormal,
            Rng::stream(9, "return", "jitter"),
        );
        for _ in 0..1000 {
            assert_eq!(a.sample_ns(100.0), b.sample_ns(100.0));
        }
    }
}
