//! The distributions D-ITG 2.8.1 draws inter-departure times (IDTs), packet sizes and on/off
//! period lengths from, for the [`stochastic`](super::stochastic) source: constant, uniform,
//! exponential, normal, Poisson, Pareto, Cauchy, gamma, Weibull, values cycled from a list
//! (`-Ft`/`-Fs`), and the Student t, discrete and mixture laws of its game and Telnet presets.
//!
//! A [`Dist`] is a law over plain `f64`s in the base unit of its use — nanoseconds for a time,
//! bytes for a size — built only through checked constructors, so a `Dist` that exists can be
//! sampled. Draws come from `rand_distr` 0.4 on the caller's ChaCha stream (the flow's named
//! stream, `lasthop_core::rng`), never a thread RNG: the same seed gives the same draws
//! everywhere. `Cargo.lock` pins `rand_distr`; an upgrade that changes an algorithm changes
//! results and must be re-recorded in the golden test like any other change of results.
//!
//! D-ITG's parameterisation, read in `src/ITGSend/ITGSend.cpp` 1193–1445 (the IDT flags
//! `-C -U -E -N -O -V -Y -G -W`, the size flags `-c -u -e -n -o -v -y -g -w`) and its `newran`
//! library (`src/ITGSend/newran/newran2.cpp`), and how each maps here:
//! - `-C rate`, `-U min_rate max_rate`, `-E rate` take packet rates (pkt/s): IDT 1000/rate ms,
//!   uniform on [1000/max_rate, 1000/min_rate] ms, exponential of mean 1000/rate ms.
//! - `-O rate` draws N ~ Poisson(rate) and waits **1000/N ms** (not an exponential IDT):
//!   [`Dist::per_poisson_count`]. A draw N = 0 is an infinite wait on which D-ITG's sender
//!   never sends again (its wait loop, ITGSend.cpp 3346–3400, never ends); here N = 0 is drawn
//!   again, so the law is 1000/N given N ≥ 1. As a size, `-o mean` is N itself.
//! - `-N mean sd` normal; `-V shape scale` Pareto with minimum `scale` (newran's `Pareto` is
//!   U^(−1/shape), Kotz & Johnson with k = 1, times `scale`); `-G shape scale` gamma.
//! - `-Y a b` is Cauchy with **location a** and scale b (ITGSend.cpp 1252: `b·Cauchy + a`,
//!   though its help text calls a "shape").
//! - `-W a b` is Weibull with **scale a and shape b**: newran's constructor is
//!   `Weibull(scale, shape)` (newran.h 358–367) and ITGSend passes its two arguments in order,
//!   while the help text says `-W <shape> <scale>`. The fields here are named, so a D-ITG
//!   command line `-W a b` is `shape = b, scale = a`.
//! - The Counter-Strike presets' Student t (newran2.cpp 99–107: μ + σ·Z·√(ν/(2G)), G ~ Γ(ν/2))
//!   is the location-scale t with ν degrees of freedom: [`Dist::student_t`].
//!
//! What a draw becomes (negative, zero, huge or non-finite values) is the source's business:
//! see the stochastic module. Left out: D-ITG's bit-exact draws (its generator is newran's
//! multiply-with-carry, not reproducible from a lasthop seed) and the laws no flag reaches.

use rand_distr::{Distribution, Uniform, WeightedIndex};
use rand_core::RngCore;
use rand_distr::{Cauchy, Exp, Gamma, Normal, Pareto, Poisson, StudentT, Weibull};
use std::fmt;
use std::sync::Arc;

/// A probability law of one quantity (nanoseconds or bytes), valid by construction.
#[derive(Clone, Debug, PartialEq)]
pub struct Dist(Kind);

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Constant(f64),
    Uniform { min: f64, max: f64 },
    Exponential { mean: f64 },
    Normal { mean: f64, sd: f64 },
    /// `unit` · N with N ~ Poisson(mean).
    Poisson { mean: f64, unit: f64 },
    PerPoissonCount { numerator: f64, rate: f64 },
    Pareto { shape: f64, scale: f64 },
    Cauchy { location: f64, scale: f64 },
    Gamma { shape: f64, scale: f64 },
    Weibull { shape: f64, scale: f64 },
    StudentT { location: f64, scale: f64, dof: f64 },
    /// (value, weight) pairs.
    Discrete(Arc<[(f64, f64)]>),
    /// (weight, component) pairs.
    Mixture(Arc<[(f64, Dist)]>),
    /// Values taken in order, from the first, and again from the first after the last.
    Cycle(Arc<[f64]>),
}

/// Why a distribution's parameters were refused: the parameter and what is valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{param}: {valid}")]
pub struct DistError {
    /// The parameter's name, as the scenario spells it (`scale`, `max`, `values`...).
    pub param: &'static str,
    pub valid: String,
}

fn require(ok: bool, param: &'static str, valid: &str) -> Result<(), DistError> {
    if ok {
        Ok(())
    } else {
        Err(DistError { param, valid: valid.to_string() })
    }
}

fn finite(x: f64, param: &'static str) -> Result<(), DistError> {
    require(x.is_finite(), param, "must be a finite number")
}

fn positive(x: f64, param: &'static str) -> Result<(), DistError> {
    require(x.is_finite() && x > 0.0, param, "must be positive")
}

fn non_negative(x: f64, param: &'static str) -> Result<(), DistError> {
    require(x.is_finite() && x >= 0.0, param, "must be zero or positive")
}

impl Dist {
    /// Always `value` (D-ITG `-C`, `-c`).
    pub fn constant(value: f64) -> Result<Dist, DistError> {
        non_negative(value, "value")?;
        Ok(Dist(Kind::Constant(value)))
    }

    /// Uniform on [min, max) (D-ITG `-U`, `-u`; min = max is the constant).
    pub fn uniform(min: f64, max: f64) -> Result<Dist, DistError> {
        non_negative(min, "min")?;
        finite(max, "max")?;
        require(max >= min, "max", "must be at least min")?;
        Ok(Dist(Kind::Uniform { min, max }))
    }

    /// Exponential with this mean (D-ITG `-E`, `-e`).
    pub fn exponential(mean: f64) -> Result<Dist, DistError> {
        positive(mean, "mean")?;
        Ok(Dist(Kind::Exponential { mean }))
    }

    /// Normal (D-ITG `-N`, `-n`); draws below zero are the source's to handle.
    pub fn normal(mean: f64, sd: f64) -> Result<Dist, DistError> {
        finite(mean, "mean")?;
        non_negative(sd, "sd")?;
        Ok(Dist(Kind::Normal { mean, sd }))
    }

    /// A Poisson count with this mean (D-ITG `-o`).
    pub fn poisson(mean: f64) -> Result<Dist, DistError> {
        positive(mean, "mean")?;
        Ok(Dist(Kind::Poisson { mean, unit: 1.0 }))
    }

    /// `numerator / N` with N ~ Poisson(`rate`) given N ≥ 1: D-ITG's `-O rate` IDT with
    /// numerator one second (module doc).
    pub fn per_poisson_count(numerator: f64, rate: f64) -> Result<Dist, DistError> {
        positive(numerator, "numerator")?;
        positive(rate, "rate")?;
        Ok(Dist(Kind::PerPoissonCount { numerator, rate }))
    }

    /// Pareto with this shape and minimum `scale` (D-ITG `-V`, `-v`).
    pub fn pareto(shape: f64, scale: f64) -> Result<Dist, DistError> {
        positive(shape, "shape")?;
        positive(scale, "scale")?;
        Ok(Dist(Kind::Pareto { shape, scale }))
    }

    /// Cauchy with this location (median) and scale (D-ITG `-Y`, `-y`).
    pub fn cauchy(location: f64, scale: f64) -> Result<Dist, DistError> {
        finite(location, "location")?;
        positive(scale, "scale")?;
        Ok(Dist(Kind::Cauchy { location, scale }))
    }

    /// Gamma with this shape and scale; mean shape · scale (D-ITG `-G`, `-g`).
    pub fn gamma(shape: f64, scale: f64) -> Result<Dist, DistError> {
        positive(shape, "shape")?;
        positive(scale, "scale")?;
        Ok(Dist(Kind::Gamma { shape, scale }))
    }

    /// Weibull with this shape and scale (D-ITG `-W scale shape`, module doc).
    pub fn weibull(shape: f64, scale: f64) -> Result<Dist, DistError> {
        positive(shape, "shape")?;
        positive(scale, "scale")?;
        Ok(Dist(Kind::Weibull { shape, scale }))
    }

    /// Location-scale Student t with `dof` degrees of freedom (D-ITG's CSa/CSi IDTs).
    pub fn student_t(location: f64, scale: f64, dof: f64) -> Result<Dist, DistError> {
        finite(location, "location")?;
        positive(scale, "scale")?;
        positive(dof, "dof")?;
        Ok(Dist(Kind::StudentT { location, scale, dof }))
    }

    /// `value` with probability proportional to `weight`, for each (value, weight).
    pub fn discrete(pairs: Vec<(f64, f64)>) -> Result<Dist, DistError> {
        require(!pairs.is_empty(), "values", "must not be empty")?;
        for &(v, w) in &pairs {
            finite(v, "values")?;
            non_negative(w, "weights")?;
        }
        require(pairs.iter().any(|&(_, w)| w > 0.0), "weights", "at least one must be positive")?;
        Ok(Dist(Kind::Discrete(pairs.into())))
    }

    /// A draw from `component` chosen with probability proportional to `weight`.
    pub fn mixture(parts: Vec<(f64, Dist)>) -> Result<Dist, DistError> {
        require(!parts.is_empty(), "components", "must not be empty")?;
        for (w, _) in &parts {
            non_negative(*w, "weights")?;
        }
        require(parts.iter().any(|(w, _)| *w > 0.0), "weights", "at least one must be positive")?;
        Ok(Dist(Kind::Mixture(parts.into())))
    }

    /// The values in order, cycled (D-ITG's `-Ft`/`-Fs` files wrap round, ITGSend.cpp 3094–3096
    /// and 3336–3338).
    pub fn cycle(values: Vec<f64>) -> Result<Dist, DistError> {
        require(!values.is_empty(), "values", "must hold at least one value")?;
        for &v in &values {
            non_negative(v, "values")?;
        }
        Ok(Dist(Kind::Cycle(values.into())))
    }

    /// The mean where it is finite and known in closed form (not for Weibull, whose mean needs
    /// Γ; not for Cauchy or Pareto with shape ≤ 1, which have none). A cycle's mean is that of
    /// its values.
    pub fn mean(&self) -> Option<f64> {
        Some(match &self.0 {
            Kind::Constant(v) => *v,
            Kind::Uniform { min, max } => (min + max) / 2.0,
            Kind::Exponential { mean } | Kind::Normal { mean, .. } => *mean,
            Kind::Poisson { mean, unit } => mean * unit,
            Kind::Pareto { shape, scale } if *shape > 1.0 => shape * scale / (shape - 1.0),
            Kind::Gamma { shape, scale } => shape * scale,
            Kind::StudentT { location, dof, .. } if *dof > 1.0 => *location,
            Kind::Discrete(p) => {
                let total: f64 = p.iter().map(|(_, w)| w).sum();
                p.iter().map(|(v, w)| v * w).sum::<f64>() / total
            }
            Kind::Mixture(p) => {
                let total: f64 = p.iter().map(|(w, _)| w).sum();
                let mut m = 0.0;
                for (w, d) in p.iter() {
                    m += w * d.mean()?;
                }
                m / total
            }
            Kind::Cycle(v) => v.iter().sum::<f64>() / v.len() as f64,
            _ => return None,
        })
    }

    /// A value the draws are typically near (the mean, else the median or scale): what a
    /// validator compares with a floor such as "at least 1 µs between packets".
    pub fn typical(&self) -> f64 {
        match &self.0 {
            Kind::PerPoissonCount { numerator, rate } => numerator / rate,
            Kind::Pareto { scale, .. } | Kind::Weibull { scale, .. } => *scale,
            Kind::Cauchy { location, .. } | Kind::StudentT { location, .. } => *location,
            Kind::Mixture(p) => {
                let total: f64 = p.iter().map(|(w, _)| w).sum();
                p.iter().map(|(w, d)| w * d.typical()).sum::<f64>() / total
            }
            _ => self.mean().unwrap_or(0.0),
        }
    }

    /// The largest value a draw can take, if bounded.
    pub fn max(&self) -> Option<f64> {
        match &self.0 {
            Kind::Constant(v) => Some(*v),
            Kind::Uniform { max, .. } => Some(*max),
            Kind::Discrete(p) => p.iter().filter(|(_, w)| *w > 0.0).map(|(v, _)| *v).reduce(f64::max),
            Kind::Cycle(v) => v.iter().copied().reduce(f64::max),
            Kind::Mixture(p) => {
                let mut m = f64::NEG_INFINITY;
                for (w, d) in p.iter() {
                    if *w > 0.0 {
                        m = m.max(d.max()?);
                    }
                }
                Some(m)
            }
            _ => None,
        }
    }

    /// The same law with every value multiplied by `k` > 0 (a unit change: ms to ns).
    pub fn scaled(&self, k: f64) -> Dist {
        assert!(k.is_finite() && k > 0.0, "a unit factor is positive");
        Dist(match &self.0 {
            Kind::Constant(v) => Kind::Constant(v * k),
            Kind::Uniform { min, max } => Kind::Uniform { min: min * k, max: max * k },
            Kind::Exponential { mean } => Kind::Exponential { mean: mean * k },
            Kind::Normal { mean, sd } => Kind::Normal { mean: mean * k, sd: sd * k },
            Kind::Poisson { mean, unit } => Kind::Poisson { mean: *mean, unit: unit * k },
            Kind::PerPoissonCount { numerator, rate } => Kind::PerPoissonCount { numerator: numerator * k, rate: *rate },
            Kind::Pareto { shape, scale } => Kind::Pareto { shape: *shape, scale: scale * k },
            Kind::Cauchy { location, scale } => Kind::Cauchy { location: location * k, scale: scale * k },
            Kind::Gamma { shape, scale } => Kind::Gamma { shape: *shape, scale: scale * k },
            Kind::Weibull { shape, scale } => Kind::Weibull { shape: *shape, scale: scale * k },
            Kind::StudentT { location, scale, dof } => {
                Kind::StudentT { location: location * k, scale: scale * k, dof: *dof }
            }
            Kind::Discrete(p) => Kind::Discrete(p.iter().map(|&(v, w)| (v * k, w)).collect()),
            Kind::Mixture(p) => Kind::Mixture(p.iter().map(|(w, d)| (*w, d.scaled(k))).collect()),
            Kind::Cycle(v) => Kind::Cycle(v.iter().map(|x| x * k).collect()),
        })
    }

    pub(super) fn sampler(&self) -> Sampler {
        // The constructors checked every parameter, so rand_distr accepts them.
        const CHECKED: &str = "parameters checked by the Dist constructor";
        match &self.0 {
            Kind::Constant(v) => Sampler::Constant(*v),
            Kind::Uniform { min, max } if min == max => Sampler::Constant(*min),
            Kind::Uniform { min, max } => Sampler::Uniform(Uniform::new(*min, *max)),
            Kind::Exponential { mean } => Sampler::Exp(Exp::new(1.0 / mean).expect(CHECKED)),
            Kind::Normal { mean, sd } => Sampler::Normal(Normal::new(*mean, *sd).expect(CHECKED)),
            Kind::Poisson { mean, unit } => Sampler::Poisson(*unit, Poisson::new(*mean).expect(CHECKED)),
            Kind::PerPoissonCount { numerator, rate } => {
                Sampler::PerPoissonCount(*numerator, Poisson::new(*rate).expect(CHECKED))
            }
            Kind::Pareto { shape, scale } => Sampler::Pareto(Pareto::new(*scale, *shape).expect(CHECKED)),
            Kind::Cauchy { location, scale } => Sampler::Cauchy(Cauchy::new(*location, *scale).expect(CHECKED)),
            Kind::Gamma { shape, scale } => Sampler::Gamma(Gamma::new(*shape, *scale).expect(CHECKED)),
            Kind::Weibull { shape, scale } => Sampler::Weibull(Weibull::new(*scale, *shape).expect(CHECKED)),
            Kind::StudentT { location, scale, dof } => {
                Sampler::StudentT { location: *location, scale: *scale, t: StudentT::new(*dof).expect(CHECKED) }
            }
            Kind::Discrete(p) => Sampler::Discrete {
                values: p.iter().map(|(v, _)| *v).collect(),
                pick: WeightedIndex::new(p.iter().map(|(_, w)| *w)).expect(CHECKED),
            },
            Kind::Mixture(p) => Sampler::Mixture {
                parts: p.iter().map(|(_, d)| d.sampler()).collect(),
                pick: WeightedIndex::new(p.iter().map(|(w, _)| *w)).expect(CHECKED),
            },
            Kind::Cycle(v) => Sampler::Cycle { values: v.clone(), next: 0 },
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Constant(v) => write!(f, "constant {v}"),
            Kind::Uniform { min, max } => write!(f, "uniform [{min}, {max})"),
            Kind::Exponential { mean } => write!(f, "exponential mean {mean}"),
            Kind::Normal { mean, sd } => write!(f, "normal mean {mean} sd {sd}"),
            Kind::Poisson { mean, unit } => write!(f, "{unit} × Poisson({mean})"),
            Kind::PerPoissonCount { numerator, rate } => write!(f, "{numerator}/Poisson({rate})"),
            Kind::Pareto { shape, scale } => write!(f, "Pareto shape {shape} scale {scale}"),
            Kind::Cauchy { location, scale } => write!(f, "Cauchy location {location} scale {scale}"),
            Kind::Gamma { shape, scale } => write!(f, "gamma shape {shape} scale {scale}"),
            Kind::Weibull { shape, scale } => write!(f, "Weibull shape {shape} scale {scale}"),
            Kind::StudentT { location, scale, dof } => write!(f, "Student t location {location} scale {scale} dof {dof}"),
            Kind::Discrete(p) => write!(f, "discrete over {} values", p.len()),
            Kind::Mixture(p) => write!(f, "mixture of {}", p.len()),
            Kind::Cycle(v) => write!(f, "{} values, cycled", v.len()),
        }
    }
}

/// A distribution ready to draw from: `rand_distr` objects built once, and a cycle's position.
#[derive(Clone, Debug)]
pub(super) enum Sampler {
    Constant(f64),
    Uniform(Uniform<f64>),
    Exp(Exp<f64>),
    Normal(Normal<f64>),
    Poisson(f64, Poisson<f64>),
    PerPoissonCount(f64, Poisson<f64>),
    Pareto(Pareto<f64>),
    Cauchy(Cauchy<f64>),
    Gamma(Gamma<f64>),
    Weibull(Weibull<f64>),
    StudentT { location: f64, scale: f64, t: StudentT<f64> },
    Discrete { values: Vec<f64>, pick: WeightedIndex<f64> },
    Mixture { parts: Vec<Sampler>, pick: WeightedIndex<f64> },
    Cycle { values: Arc<[f64]>, next: usize },
}

impl Sampler {
    /// One raw draw (it may be negative or huge: the caller clamps).
    pub(super) fn draw<R: RngCore>(&mut self, rng: &mut R) -> f64 {
        match self {
            Sampler::Constant(v) => *v,
            Sampler::Uniform(u) => u.sample(rng),
            Sampler::Exp(e) => e.sample(rng),
            Sampler::Normal(n) => n.sample(rng),
            Sampler::Poisson(unit, p) => *unit * p.sample(rng),
            Sampler::PerPoissonCount(numerator, p) => loop {
                let n: f64 = p.sample(rng);
                if n >= 1.0 {
                    break *numerator / n;
                }
            },
            Sampler::Pareto(p) => p.sample(rng),
            Sampler::Cauchy(c) => c.sample(rng),
            Sampler::Gamma(g) => g.sample(rng),
            Sampler::Weibull(w) => w.sample(rng),
            Sampler::StudentT { location, scale, t } => *location + *scale * t.sample(rng),
            Sampler::Discrete { values, pick } => values[pick.sample(rng)],
            Sampler::Mixture { parts, pick } => {
                let i = pick.sample(rng);
                parts[i].draw(rng)
            }
            Sampler::Cycle { values, next } => {
                let v = values[*next];
                *next = (*next + 1) % values.len();
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStreams;

    const N: usize = 200_000;

    fn draws(d: &Dist, n: usize) -> Vec<f64> {
        let mut s = d.sampler();
        let mut rng = RngStreams::new(2024).stream(&format!("dist/{d}"));
        (0..n).map(|_| s.draw(&mut rng)).collect()
    }

    /// Checks the sample mean and variance against the closed forms. Tolerance: 4 standard
    /// errors by the CLT (two-sided 6·10⁻⁵): σ/√n for the mean and √((μ₄ − σ⁴)/n) for the
    /// variance, with the fourth central moment μ₄ estimated from the sample (every law tested
    /// here has a finite one).
    fn check_moments(d: Dist, mean: f64, var: f64) {
        let x = draws(&d, N);
        let n = N as f64;
        let m = x.iter().sum::<f64>() / n;
        let v = x.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
        let m4 = x.iter().map(|x| (x - m).powi(4)).sum::<f64>() / n;
        let se_mean = (var / n).sqrt();
        let se_var = ((m4 - v * v).max(0.0) / n).sqrt();
        assert!((m - mean).abs() <= 4.0 * se_mean, "{d}: mean {m}, expected {mean} ± {}", 4.0 * se_mean);
        assert!((v - var).abs() <= 4.0 * se_var, "{d}: variance {v}, expected {var} ± {}", 4.0 * se_var);
    }

    /// Checks sample quantiles against the law's: the sd of a sample p-quantile is
    /// √(p(1 − p)/n) / f(q); the bound is 4 of those, with the density f given.
    fn check_quantile(x: &mut [f64], p: f64, q: f64, density: f64) {
        x.sort_by(f64::total_cmp);
        let got = x[(p * x.len() as f64) as usize];
        let sd = (p * (1.0 - p) / x.len() as f64).sqrt() / density;
        assert!((got - q).abs() <= 4.0 * sd, "quantile {p}: {got}, expected {q} ± {}", 4.0 * sd);
    }

    #[test]
    fn light_tailed_laws_have_their_closed_form_mean_and_variance() {
        // Uniform [a, b): (a+b)/2, (b−a)²/12. Exponential: m, m². Normal: μ, σ². Poisson: λ, λ
        // (λ = 4 uses Knuth's product method, λ = 50 the rejection method). Gamma(k, θ): kθ,
        // kθ² (k < 1 and k > 1 take different algorithms). Weibull(k = 2, λ = 4): λΓ(1.5) =
        // 4 · 0.8862269 = 3.5449077, λ²(1 − π/4) = 3.4336294. Pareto(α = 5, x_m = 2): αx_m/(α−1)
        // = 2.5, x_m²α/((α−1)²(α−2)) = 0.4166667. Student t(ν = 6) · 2 + 5: 5, 4 · ν/(ν−2) = 6.
        check_moments(Dist::uniform(2.0, 10.0).unwrap(), 6.0, 64.0 / 12.0);
        check_moments(Dist::exponential(5.0).unwrap(), 5.0, 25.0);
        check_moments(Dist::normal(10.0, 3.0).unwrap(), 10.0, 9.0);
        check_moments(Dist::poisson(4.0).unwrap(), 4.0, 4.0);
        check_moments(Dist::poisson(50.0).unwrap(), 50.0, 50.0);
        check_moments(Dist::gamma(2.5, 3.0).unwrap(), 7.5, 22.5);
        check_moments(Dist::gamma(0.5, 3.0).unwrap(), 1.5, 4.5);
        check_moments(Dist::weibull(2.0, 4.0).unwrap(), 3.5449077, 3.4336294);
        check_moments(Dist::pareto(5.0, 2.0).unwrap(), 2.5, 0.4166667);
        check_moments(Dist::student_t(5.0, 2.0, 6.0).unwrap(), 5.0, 6.0);
        // Discrete {1: 0.2, 4: 0.8}: 3.4, 0.2·1 + 0.8·16 − 3.4² = 1.44. Mixture ½N(0,1) +
        // ½ const 10: 5, ½(1) + ½(100) − 25 = 25.5.
        check_moments(Dist::discrete(vec![(1.0, 0.2), (4.0, 0.8)]).unwrap(), 3.4, 1.44);
        let mix = Dist::mixture(vec![(1.0, Dist::normal(0.0, 1.0).unwrap()), (1.0, Dist::constant(10.0).unwrap())]);
        check_moments(mix.unwrap(), 5.0, 25.5);
    }

    #[test]
    fn ditgs_poisson_idt_is_one_second_over_a_poisson_count() {
        // -O 5: E[1/N | N ≥ 1] for N ~ Poisson(5), summed: Σ_k≥1 (1/k) e^−5 5^k/k! / (1 − e^−5).
        let lambda = 5.0f64;
        let (mut p, mut m1, mut m2) = ((-lambda).exp(), 0.0, 0.0);
        for k in 1..200 {
            p *= lambda / k as f64;
            m1 += p / k as f64;
            m2 += p / (k * k) as f64;
        }
        let z = 1.0 - (-lambda).exp();
        let (mean, second) = (1e9 * m1 / z, 1e18 * m2 / z);
        check_moments(Dist::per_poisson_count(1e9, lambda).unwrap(), mean, second - mean * mean);
        // No draw is infinite (N = 0 is drawn again) and none exceeds 1 s (N ≥ 1).
        assert!(draws(&Dist::per_poisson_count(1e9, 0.5).unwrap(), 10_000).iter().all(|&x| x > 0.0 && x <= 1e9));
    }

    #[test]
    fn heavy_tailed_laws_have_their_quantiles() {
        // Pareto(α = 1.5, x_m = 2): q_p = x_m (1 − p)^(−1/α), density α x_m^α / q^(α+1).
        let mut x = draws(&Dist::pareto(1.5, 2.0).unwrap(), N);
        assert!(x.iter().all(|&v| v >= 2.0));
        for p in [0.5f64, 0.9, 0.99] {
            let q = 2.0 * (1.0 - p).powf(-1.0 / 1.5);
            check_quantile(&mut x, p, q, 1.5 * 2f64.powf(1.5) / q.powf(2.5));
        }
        // Cauchy(10, 2): quartiles 8 and 12, median 10; density 1/(πγ(1 + ((q − x₀)/γ)²)).
        let mut x = draws(&Dist::cauchy(10.0, 2.0).unwrap(), N);
        let f = |q: f64| 1.0 / (std::f64::consts::PI * 2.0 * (1.0 + ((q - 10.0) / 2.0).powi(2)));
        for (p, q) in [(0.25, 8.0), (0.5, 10.0), (0.75, 12.0)] {
            check_quantile(&mut x, p, q, f(q));
        }
    }

    #[test]
    fn a_cycle_takes_its_values_in_order_and_wraps() {
        assert_eq!(draws(&Dist::cycle(vec![3.0, 1.0, 2.0]).unwrap(), 7), vec![3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn scaling_changes_the_unit_not_the_law() {
        // Gamma(2.5, 3 ms) in ns has mean 7.5e6 and the same shape.
        let d = Dist::gamma(2.5, 3.0).unwrap().scaled(1e6);
        assert_eq!(d, Dist::gamma(2.5, 3e6).unwrap());
        assert_eq!(d.mean(), Some(7.5e6));
        assert_eq!(Dist::poisson(4.0).unwrap().scaled(1e6).mean(), Some(4e6));
    }

    #[test]
    fn bad_parameters_are_refused_with_the_parameter_named() {
        assert_eq!(Dist::pareto(-1.5, 2.0).unwrap_err().param, "shape");
        assert_eq!(Dist::weibull(2.0, 0.0).unwrap_err().param, "scale");
        assert_eq!(Dist::uniform(5.0, 1.0).unwrap_err().to_string(), "max: must be at least min");
        assert_eq!(Dist::normal(f64::NAN, 1.0).unwrap_err().param, "mean");
        assert_eq!(Dist::cycle(vec![]).unwrap_err().param, "values");
        assert!(Dist::discrete(vec![(1.0, 0.0)]).is_err());
    }

    #[test]
    fn the_same_stream_gives_the_same_draws() {
        let d = Dist::gamma(0.7, 1.0).unwrap();
        assert_eq!(draws(&d, 100), draws(&d, 100));
    }
}
