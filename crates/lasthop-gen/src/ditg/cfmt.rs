//! The few C `printf` conversions ITGDec uses, reproduced digit for digit, and the
//! `fscanf("%lf")` it reads its own temporary files back with.
//!
//! Rust's `{:.N}` rounds the exact binary value half-to-even, prints the sign of a negative
//! zero and prints infinities as `inf`, as glibc's `%.Nf` does; only NaN differs: glibc prints
//! `nan` or `-nan` by the sign bit (x86's 0.0/0.0 has it set, so ITGDec prints `-nan`), Rust
//! prints `NaN`.

/// `%W.Pf` (`%W.Plf`).
pub fn f(x: f64, width: usize, prec: usize) -> String {
    if x.is_nan() {
        let s = if x.is_sign_negative() { "-nan" } else { "nan" };
        return format!("{s:>width$}");
    }
    format!("{x:>width$.prec$}")
}

/// `%lf`: six decimals, no width.
pub fn lf(x: f64) -> String {
    f(x, 0, 6)
}

/// `%Wu` / `%Wlu`.
pub fn u(x: u64, width: usize) -> String {
    format!("{x:>width$}")
}

/// C's `a / b` on x86-64 (SSE): 0/0 and ∞/∞ give the "default NaN", whose sign bit is set.
pub fn div(a: f64, b: f64) -> f64 {
    let q = a / b;
    if q.is_nan() && !a.is_nan() && !b.is_nan() {
        f64::from_bits(0xFFF8_0000_0000_0000)
    } else {
        q
    }
}

/// What `fscanf("%lf")` reads back from `lf(x)`: x rounded to six decimals (the sign of a NaN
/// kept, as glibc's `strtod("-nan")` does).
pub fn lf_round_trip(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    lf(x).parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_glibc_printf() {
        // Expected strings from glibc's printf on this machine (`printf '%13.6f' ...`).
        assert_eq!(f(0.0078125, 13, 6), "     0.007812"); // exact tie: half to even
        assert_eq!(f(-1e-9, 13, 6), "    -0.000000");
        assert_eq!(f(f64::INFINITY, 13, 6), "          inf");
        assert_eq!(f(div(0.0, 0.0), 13, 6), "         -nan");
        assert_eq!(f(10.085, 3, 2), "10.09"); // 10.0850000000000008527 rounds up
        assert_eq!(u(42, 13), "           42");
        assert_eq!(lf(-90000.0), "-90000.000000");
        assert_eq!(lf_round_trip(0.1234567), 0.123457);
        assert!(lf_round_trip(div(0.0, 0.0)).is_sign_negative());
    }
}
