//! Synthetic MPEG-4 VBR video after `../shared/reference/models.md` §5.4, calibrated to the TKN
//! traces (Fitzek & Reisslein, "MPEG-4 and H.263 video traces for network performance
//! evaluation", IEEE Network 15(6), 2001): one frame every 40 ms (25 frames/s), GoP
//! I B B P B B P B B P B B, frame size = m_type · S_scene · E_frame with S and E lognormal of
//! mean 1 (CoV c_s and 0.25), a new scene activity S with probability 1/120 per frame (scenes of
//! geometric length, mean 10 GoPs), clipped to [1 B, the trace's largest frame].
//!
//! Trade-offs: it reproduces the mean rate, frame and GoP variability and the peak, not the
//! long-range dependence (Hurst 0.8–0.9 for Star Wars) of the real traces. A scene may change at
//! any frame, where the recipe's `traffic_models.py` changes it only at a GoP boundary (same mean
//! scene length; slightly different GoP CoV). Frames leave in display order, one per 40 ms slot,
//! not in ns-3 `UdpTraceClient`'s decoding order (B frames sent with their anchor).

use crate::rng::{lognormal_unit_mean, uniform01};
use crate::time::Duration;
use crate::units::Bytes;
use rand_core::RngCore;

/// 25 frames/s.
pub const FRAME_INTERVAL: Duration = Duration::from_millis(40);
/// CoV of the per-frame noise E (models.md §5.4 assumes 0.25).
const FRAME_COV: f64 = 0.25;
/// Mean scene length: 10 GoPs of 12 frames.
const MEAN_SCENE_FRAMES: f64 = 120.0;
/// I B B P B B P B B P B B as indexes into `Video::mean` (0 = I, 1 = P, 2 = B).
const GOP: [usize; 12] = [0, 2, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2];

/// The calibrated parameters of one trace (models.md §5.4 table; the I/P/B split comes out of
/// the calibration, it is not published data).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VideoModel {
    pub mean_i_bytes: f64,
    pub mean_p_bytes: f64,
    pub mean_b_bytes: f64,
    /// CoV c_s of the scene activity.
    pub scene_cov: f64,
    /// The trace's largest frame.
    pub max_frame_bytes: f64,
}

impl VideoModel {
    /// Star Wars IV, MPEG-4, high quality: 1376 B mean frame, 275 kb/s, frame CoV 0.66.
    pub const STARWARS_MPEG4_HIGH: VideoModel = VideoModel::new(2788.0, 1961.0, 981.0, 0.371, 9370.0);
    /// Star Wars IV, MPEG-4, medium quality: 389 B, 78 kb/s.
    pub const STARWARS_MPEG4_MEDIUM: VideoModel = VideoModel::new(1474.0, 456.0, 228.0, 0.509, 4690.0);
    /// Star Wars IV, MPEG-4, low quality: 267 B, 53 kb/s.
    pub const STARWARS_MPEG4_LOW: VideoModel = VideoModel::new(1511.0, 241.0, 121.0, 0.439, 4686.0);
    /// Lecture Room-Cam, MPEG-4, medium quality: 289 B, 58 kb/s.
    pub const LECTURE_MPEG4_MEDIUM: VideoModel = VideoModel::new(1691.0, 253.0, 127.0, 0.269, 3432.0);
    /// Lecture Room-Cam, MPEG-4, low quality: 212 B, 42 kb/s.
    pub const LECTURE_MPEG4_LOW: VideoModel = VideoModel::new(1751.0, 113.0, 56.0, 0.097, 3432.0);

    const fn new(i: f64, p: f64, b: f64, scene_cov: f64, max: f64) -> VideoModel {
        VideoModel { mean_i_bytes: i, mean_p_bytes: p, mean_b_bytes: b, scene_cov, max_frame_bytes: max }
    }
}

/// A video source's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VideoParams {
    pub model: VideoModel,
    /// Largest datagram payload; a longer frame leaves as several back-to-back datagrams.
    pub packet_size: Bytes,
}

#[derive(Clone, Debug)]
pub(super) struct Video {
    /// Mean I, P, B frame sizes in bytes.
    mean: [f64; 3],
    scene_cov: f64,
    max_frame: f64,
    packet_size: u32,
    frame: usize,
    scene: f64,
}

/// One frame per 40 ms slot from the source's start.
pub(super) fn departure_after(last: Option<Duration>) -> Duration {
    last.map_or(Duration::ZERO, |t| t + FRAME_INTERVAL)
}

impl Video {
    pub(super) fn new(p: VideoParams) -> Video {
        let m = p.model;
        Video {
            mean: [m.mean_i_bytes, m.mean_p_bytes, m.mean_b_bytes],
            scene_cov: m.scene_cov,
            max_frame: m.max_frame_bytes,
            packet_size: p.packet_size.0 as u32,
            frame: 0,
            scene: 0.0,
        }
    }

    pub(super) fn packet_size(&self) -> u32 {
        self.packet_size
    }

    /// Draws, in this order: whether a new scene starts (not for the first frame, which always
    /// starts one), the new scene's activity, the frame noise.
    pub(super) fn next_frame_bytes(&mut self, rng: &mut impl RngCore) -> u32 {
        if self.frame == 0 || uniform01(rng) < 1.0 / MEAN_SCENE_FRAMES {
            self.scene = lognormal_unit_mean(rng, self.scene_cov);
        }
        let kind = GOP[self.frame % GOP.len()];
        self.frame += 1;
        let size = self.mean[kind] * self.scene * lognormal_unit_mean(rng, FRAME_COV);
        size.clamp(1.0, self.max_frame).round() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Source, SourceParams};
    use super::*;
    use crate::rng::RngStreams;

    fn frames(model: VideoModel, n: usize) -> Vec<f64> {
        let mut s = Source::new(SourceParams::Video(VideoParams { model, packet_size: Bytes(1472) }));
        let mut rng = RngStreams::new(1).stream("video");
        (0..n).map(|_| s.next(&mut rng).bytes as f64).collect()
    }

    #[test]
    fn one_frame_every_40_ms() {
        // 25 frames/s: frame k at k · 40 ms exactly.
        let mut s = Source::new(SourceParams::Video(VideoParams {
            model: VideoModel::LECTURE_MPEG4_LOW,
            packet_size: Bytes(1472),
        }));
        let mut rng = RngStreams::new(2).stream("video");
        for k in 0..1000u64 {
            assert_eq!(s.next(&mut rng).at, Duration(k * 40_000_000));
        }
    }

    /// The mean over n frames, with its standard error: frames of one scene share S, whose
    /// autocorrelation at lag k is ρ^k, ρ = 1 − 1/120, so
    /// Var(mean) ≈ (Var X + 2·m̄²·c_s²·Σ_{k≥1} ρ^k) / n with Σ ρ^k = 119.
    fn mean_and_se(xs: &[f64], var_x: f64, mean: f64, cs: f64) -> (f64, f64) {
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = var_x + 2.0 * mean * mean * cs * cs * (MEAN_SCENE_FRAMES - 1.0);
        (m, (var / xs.len() as f64).sqrt())
    }

    #[test]
    fn star_wars_high_has_the_calibrated_mean_frame_and_cov() {
        // models.md §5.4: m̄ = (m_I + 3 m_P + 8 m_B)/12 = 16519/12 = 1376.6 B, the trace's 1376 B
        // (E[S] = E[E] = 1; clipping at 9370 B removes 0.14 B per frame). Frame CoV² =
        // mean(m²)/m̄² · (1 + c_s²)(1 + c_f²) − 1 = 1.18771 · 1.13764 · 1.0625 − 1, CoV 0.660,
        // the trace's 0.66.
        let m = VideoModel::STARWARS_MPEG4_HIGH;
        let n = 900_000; // ten hours
        let xs = frames(m, n);
        let mbar = 16519.0 / 12.0;
        let cov2 = (2788f64.powi(2) + 3.0 * 1961f64.powi(2) + 8.0 * 981f64.powi(2)) / 12.0 / (mbar * mbar)
            * (1.0 + 0.371f64.powi(2))
            * (1.0 + FRAME_COV * FRAME_COV)
            - 1.0;
        let (mean, se) = mean_and_se(&xs, cov2 * mbar * mbar, mbar, m.scene_cov);
        assert!((mean - mbar).abs() < 3.0 * se, "mean frame {mean:.1} B, expected {mbar:.1} ± {:.1}", 3.0 * se);
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        // The sample second moment is dominated by the ~7500 scenes' S²: relative se of E[S²]
        // ≈ sd(S²)/(E[S²]·√7500) = 0.935/(1.138·86.6) ≈ 0.95 %, i.e. ≈ 0.010 on the CoV; 3σ = 0.03.
        assert!((sd / mean - cov2.sqrt()).abs() < 0.03, "frame CoV {:.3}, expected {:.3}", sd / mean, cov2.sqrt());
        assert!(xs.iter().all(|&x| (1.0..=9370.0).contains(&x)), "frames clipped to [1, 9370] B");
    }

    #[test]
    fn i_frames_follow_the_gop_pattern() {
        // Frames 0, 12, 24, … are I frames of mean m_I = 2788 B (clipping: −1.7 B). I frames are
        // 12 apart, so their S correlation sums to Σ ρ^(12k) = ρ¹²/(1 − ρ¹²) = 9.50, and
        // Var(X_I) = m_I²·((1 + c_s²)(1 + c_f²) − 1).
        let m = VideoModel::STARWARS_MPEG4_HIGH;
        let xs = frames(m, 900_000);
        let i: Vec<f64> = xs.iter().step_by(12).copied().collect();
        let mean = i.iter().sum::<f64>() / i.len() as f64;
        let rho12 = (1.0 - 1.0 / MEAN_SCENE_FRAMES).powi(12);
        let var = 2788f64.powi(2) * ((1.0 + 0.371f64.powi(2)) * (1.0 + FRAME_COV * FRAME_COV) - 1.0)
            + 2.0 * 2788f64.powi(2) * 0.371f64.powi(2) * rho12 / (1.0 - rho12);
        let se = (var / i.len() as f64).sqrt();
        assert!((mean - 2788.0).abs() < 3.0 * se, "mean I frame {mean:.0} B, expected 2788 ± {:.0}", 3.0 * se);
    }
}
