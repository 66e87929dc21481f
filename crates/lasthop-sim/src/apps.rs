//! Applications: what writes into a flow and when. Each is a small state machine asked by the
//! simulator "what now?" with the current time, so none of them knows about events or packets.
//!
//! - [`Source`] for message sources: CBR (constant size and inter-departure time, as D-ITG's
//!   `-C`/`-c`), on/off (CBR at `rate` during on periods; constant or exponential periods) and
//!   synthetic VBR video (one frame per 40 ms, cut into packets).
//! - [`Transfer`] for TCP writers: greedy bulk (optionally N bytes) and file transfers of N bytes.

use lasthop_scenario::{App, Periods, VideoPreset};
use lasthop_core::rng::{lognormal_unit_mean, uniform01, exponential, SimRng};
use lasthop_core::{Duration, Time};

/// A CBR, on/off or video message source.
#[derive(Debug)]
pub struct Source {
    size: u32,
    interval: Duration,
    onoff: Option<OnOff>,
    video: Option<Video>,
    /// Largest packet payload; longer messages (video frames) are cut into several packets.
    max_packet: u32,
}

/// Synthetic MPEG-4 VBR video after models.md §5.4: frame size = m_type · S_scene · E_frame,
/// S and E lognormal with mean 1 (CoV c_s and 0.25), scenes of geometric length (mean 10 GoPs),
/// clipped at the trace's largest frame. It reproduces mean rate, frame and GoP variability
/// and the peak; not the long-range dependence of the real trace.
#[derive(Debug)]
struct Video {
    /// Mean I, P, B frame sizes in bytes.
    mean: [f64; 3],
    scene_cov: f64,
    max_frame: f64,
    frame: usize,
    scene: f64,
    rng: SimRng,
}

const FRAME_COV: f64 = 0.25;
const MEAN_SCENE_FRAMES: f64 = 120.0;
/// I B B P B B P B B P B B as indexes into `Video::mean`.
const GOP: [usize; 12] = [0, 2, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2];

impl Video {
    /// Calibrated parameters of models.md §5.4 (traffic_models.py).
    fn new(preset: VideoPreset, rng: SimRng) -> Video {
        let (i, p, b, cs, max) = match preset {
            VideoPreset::StarwarsMpeg4High => (2788.0, 1961.0, 981.0, 0.371, 9370.0),
            VideoPreset::StarwarsMpeg4Medium => (1474.0, 456.0, 228.0, 0.509, 4690.0),
            VideoPreset::StarwarsMpeg4Low => (1511.0, 241.0, 121.0, 0.439, 4686.0),
            VideoPreset::LectureMpeg4Medium => (1691.0, 253.0, 127.0, 0.269, 3432.0),
            VideoPreset::LectureMpeg4Low => (1751.0, 113.0, 56.0, 0.097, 3432.0),
        };
        Video { mean: [i, p, b], scene_cov: cs, max_frame: max, frame: 0, scene: 0.0, rng }
    }

    fn next_frame_bytes(&mut self) -> u32 {
        if self.frame == 0 || uniform01(&mut self.rng) < 1.0 / MEAN_SCENE_FRAMES {
            self.scene = lognormal_unit_mean(&mut self.rng, self.scene_cov);
        }
        let kind = GOP[self.frame % GOP.len()];
        self.frame += 1;
        let size = self.mean[kind] * self.scene * lognormal_unit_mean(&mut self.rng, FRAME_COV);
        size.clamp(1.0, self.max_frame).round() as u32
    }
}

#[derive(Debug)]
struct OnOff {
    on: Duration,
    off: Duration,
    periods: Periods,
    rng: SimRng,
    on_until: Time,
}

impl OnOff {
    fn draw(&mut self, mean: Duration) -> Duration {
        match self.periods {
            Periods::Constant => mean,
            Periods::Exponential => Duration(exponential(&mut self.rng, mean.0 as f64).round().max(1.0) as u64),
        }
    }
}

impl Source {
    /// `None` for applications that are not message sources.
    pub fn new(app: &App, rng: SimRng) -> Option<Self> {
        match *app {
            App::Cbr { size, interval } => {
                Some(Source { size: size.0 as u32, interval, onoff: None, video: None, max_packet: size.0 as u32 })
            }
            App::Onoff { size, rate, on, off, periods } => Some(Source {
                size: size.0 as u32,
                // While on: one packet of `size` payload bytes every size·8/rate.
                interval: rate.tx_time(size.0),
                onoff: Some(OnOff { on, off, periods, rng, on_until: Time::ZERO }),
                video: None,
                max_packet: size.0 as u32,
            }),
            App::Video { preset, packet_size } => Some(Source {
                size: 0,
                interval: Duration::from_millis(40),
                onoff: None,
                video: Some(Video::new(preset, rng)),
                max_packet: packet_size.0 as u32,
            }),
            _ => None,
        }
    }

    /// Bytes of the next message (a packet, or a whole video frame).
    pub fn next_message(&mut self) -> u32 {
        match self.video.as_mut() {
            Some(v) => v.next_frame_bytes(),
            None => self.size,
        }
    }

    pub fn max_packet(&self) -> u32 {
        self.max_packet
    }

    /// Called at the start time: returns when the first message goes.
    pub fn start(&mut self, now: Time) -> Time {
        if let Some(o) = self.onoff.as_mut() {
            let on = o.on;
            o.on_until = now + o.draw(on);
        }
        now
    }

    /// Called right after a message was sent at `now`: when does the next one go?
    pub fn next_after(&mut self, now: Time) -> Time {
        let next = now + self.interval;
        match self.onoff.as_mut() {
            None => next,
            Some(o) if next < o.on_until => next,
            Some(o) => {
                let (on, off) = (o.on, o.off);
                let next_on = o.on_until + o.draw(off);
                o.on_until = next_on + o.draw(on);
                next_on
            }
        }
    }
}

/// A TCP writer: how many bytes the application still wants to write.
#[derive(Debug)]
pub struct Transfer {
    /// None = unlimited (greedy until stopped).
    pub total: Option<u64>,
    pub written: u64,
    pub stopped: bool,
    /// Messages of a CBR-over-TCP source waiting for send-buffer space.
    pub backlog: u64,
}

impl Transfer {
    pub fn new(app: &App) -> Self {
        let total = match *app {
            App::Bulk { bytes } => bytes.map(|b| b.0),
            App::File { bytes, .. } => Some(bytes.0),
            App::Cbr { .. } | App::Onoff { .. } | App::Video { .. } => Some(0),
        };
        Transfer { total, written: 0, stopped: false, backlog: 0 }
    }

    /// Bytes the application would write now if the socket had room.
    pub fn wants(&self) -> u64 {
        if self.stopped {
            return self.backlog;
        }
        match self.total {
            None => u64::MAX,
            Some(0) => self.backlog,
            Some(t) => t - self.written,
        }
    }

    /// Records `n` bytes accepted by the socket.
    pub fn wrote(&mut self, n: u64) {
        self.written += n;
        if self.total == Some(0) || self.stopped {
            self.backlog -= n.min(self.backlog);
        }
    }

    /// True when the application has nothing more to write and should close.
    pub fn finished(&self) -> bool {
        match self.total {
            Some(0) => self.stopped && self.backlog == 0,
            Some(t) => self.written >= t,
            None => self.stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::rng::RngStreams;
    use lasthop_core::units::{BitRate, Bytes};

    #[test]
    fn cbr_sends_every_interval() {
        let app = App::Cbr { size: Bytes(160), interval: Duration::from_millis(20) };
        let mut s = Source::new(&app, RngStreams::new(1).stream("x")).unwrap();
        let t0 = s.start(Time(0));
        assert_eq!(s.next_after(t0), Time(20_000_000));
    }

    #[test]
    fn video_reproduces_the_calibrated_mean_rate() {
        // models.md §5.4: Star Wars IV MPEG-4 high, synthetic mean 1357 B per frame
        // (the trace: 1376 B, 275 kb/s at 25 frames/s).
        let app = App::Video { preset: VideoPreset::StarwarsMpeg4High, packet_size: lasthop_core::units::Bytes(1472) };
        let mut s = Source::new(&app, RngStreams::new(1).stream("v")).unwrap();
        let n = 90_000; // one hour of frames
        let total: u64 = (0..n).map(|_| s.next_message() as u64).sum();
        let mean = total as f64 / n as f64;
        assert!((mean - 1376.0).abs() / 1376.0 < 0.05, "mean frame {mean:.0} B");
    }

    #[test]
    fn onoff_constant_periods_pause_for_off() {
        // 1000 B at 8 Mb/s: one packet per ms; on 3 ms, off 10 ms.
        let app = App::Onoff {
            size: Bytes(1000),
            rate: BitRate(8_000_000),
            on: Duration::from_millis(3),
            off: Duration::from_millis(10),
            periods: Periods::Constant,
        };
        let mut s = Source::new(&app, RngStreams::new(1).stream("x")).unwrap();
        let mut t = s.start(Time(0));
        let mut times = vec![t.0 / 1_000_000];
        for _ in 0..4 {
            t = s.next_after(t);
            times.push(t.0 / 1_000_000);
        }
        // Packets at 0, 1, 2 ms (on), then the next on period starts at 3 + 10 = 13 ms.
        assert_eq!(times, vec![0, 1, 2, 13, 14]);
    }
}
