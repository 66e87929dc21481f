//! The scenario side of traffic: a flow's `app` (and its TCP read pacing) becomes, once, when
//! the network is built, the typed parameters of `lasthop_core::traffic` — a message
//! [`Schedule`] on the flow's random stream `flow/<name>/app` and a TCP [`Transfer`]. The
//! runtime keeps these in the flow's state and never reads the schema again; the same core
//! sources run in a real-socket generator.
//!
//! `stochastic` apps and D-ITG presets become a [`StochasticParams`] whose messages are cut
//! into packets no larger than the path MTU less 28 B of IPv4 and UDP headers; the game presets
//! are the same laws as the home scenario's CBR flows (constants draw nothing), and the video
//! presets the `video` app's sources.

use crate::{App, Flow, Periods, PresetName, Scenario, Topology, VideoPreset};
use lasthop_core::rng::RngStreams;
use lasthop_core::traffic::{
    Bursts, Calls, CbrParams, Dist, FileLoop, OnOffParams, PacedReads, Schedule, SourceParams, StochasticParams,
    Transfer, VideoModel, VideoParams, Volume,
};
use lasthop_core::units::Bytes;

/// Default bytes per application read when a read rate is set (paper 000's 8 KiB buffer).
pub const DEFAULT_READ_SIZE: Bytes = Bytes(8 * 1024);
/// The file loop's default `send()` size: paper 000's 4096-byte application packets.
pub const DEFAULT_MESSAGE: Bytes = Bytes(4096);
/// The file loop's default application buffer: paper 000's best, 8 KiB.
pub const DEFAULT_APP_BUFFER: Bytes = Bytes(8 * 1024);

/// A flow's traffic, built from its scenario entry.
pub struct FlowApp {
    /// The messages and their departures (CBR, on/off, video); `None` for byte transfers.
    pub messages: Option<Schedule>,
    /// What a TCP sender writes and how both applications call their sockets.
    pub transfer: Transfer,
}

/// Converts flow `f`'s application (validated) into core traffic parameters.
pub fn flow_app(scenario: &Scenario, f: &Flow, rng: &RngStreams) -> FlowApp {
    let messages = source_params(scenario, f).map(|p| Schedule::new(p, rng.stream(&format!("flow/{}/app", f.name))));
    let volume = match f.app {
        App::Bulk { bytes } => bytes.map_or(Volume::UntilStopped, |b| Volume::Bytes(b.0)),
        App::File { bytes, .. } => Volume::Bytes(bytes.0),
        App::Cbr { .. } | App::Onoff { .. } | App::Video { .. } | App::Stochastic { .. } | App::Preset { .. } => {
            Volume::Messages
        }
    };
    let calls = match (&f.app, f.tcp.as_ref().and_then(|p| p.read_rate)) {
        (App::File { message, app_buffer, send_delay, receive_delay, .. }, _) if scenario.uses_file_loop(f) => {
            Calls::FileLoop(FileLoop {
                message: message.unwrap_or(DEFAULT_MESSAGE),
                app_buffer: app_buffer.unwrap_or(DEFAULT_APP_BUFFER),
                send_delay: send_delay.unwrap_or_default(),
                receive_delay: receive_delay.unwrap_or_default(),
            })
        }
        (_, Some(rate)) => Calls::PacedReads(PacedReads {
            rate,
            size: f.tcp.as_ref().and_then(|p| p.read_size).unwrap_or(DEFAULT_READ_SIZE),
        }),
        (_, None) => Calls::Immediate,
    };
    FlowApp { messages, transfer: Transfer { volume, calls } }
}

/// IPv4 (20 B) and UDP (8 B) headers: a datagram's payload is at most the MTU less these.
const IP_UDP_HEADERS: u64 = 28;

/// The message source flow `f`'s application describes; `None` for byte transfers.
pub fn source_params(scenario: &Scenario, f: &Flow) -> Option<SourceParams> {
    let max_packet = || {
        let mtu = Topology::new(scenario).path_mtu(f.src.get_ref(), f.dst.get_ref()).unwrap_or(1500);
        mtu.saturating_sub(IP_UDP_HEADERS).clamp(1, u32::MAX as u64) as u32
    };
    Some(match f.app {
        App::Stochastic { ref idt, ref size, ref on, ref off, count, bytes } => {
            const VALID: &str = "validated when the scenario loaded";
            let (idt, first) = idt.to_core().expect(VALID);
            let mut p = StochasticParams::new(idt, size.to_core().expect(VALID));
            p.first = first;
            if let (Some(on), Some(off)) = (on, off) {
                let on = on.to_core().expect(VALID).0;
                p.bursts = Some(Bursts { on, off: off.to_core().expect(VALID).0 });
            }
            p.max_messages = count;
            p.max_bytes = bytes.map(|b| b.0);
            p.max_packet = max_packet();
            SourceParams::Stochastic(p)
        }
        App::Preset { name, header, vad, count, bytes } => {
            let mut p = match (name, name.ditg(header.unwrap_or_default(), vad)) {
                (_, Some(preset)) => preset.params(),
                (PresetName::GameDown, _) => game(50, 200.0),
                (PresetName::GameUp, _) => game(60, 42.0),
                (video, _) => return Some(video_params(video)),
            };
            p.max_messages = count;
            p.max_bytes = bytes.map(|b| b.0);
            p.max_packet = max_packet();
            SourceParams::Stochastic(p)
        }
        _ => return source_params_of(&f.app),
    })
}

/// The home scenario's game flows (Palazzi et al. 2006 §4): `bytes` every `ms` milliseconds.
fn game(ms: u64, bytes: f64) -> StochasticParams {
    const CONSTANTS: &str = "positive constants";
    StochasticParams::new(
        Dist::constant(ms as f64 * 1e6).expect(CONSTANTS),
        Dist::constant(bytes).expect(CONSTANTS),
    )
}

/// A video preset's source: the `video` app's, with its default packet size.
fn video_params(name: PresetName) -> SourceParams {
    let preset = match name {
        PresetName::VideoStarwarsMpeg4Medium => VideoPreset::StarwarsMpeg4Medium,
        PresetName::VideoStarwarsMpeg4Low => VideoPreset::StarwarsMpeg4Low,
        PresetName::VideoLectureMpeg4Medium => VideoPreset::LectureMpeg4Medium,
        PresetName::VideoLectureMpeg4Low => VideoPreset::LectureMpeg4Low,
        _ => VideoPreset::StarwarsMpeg4High,
    };
    source_params_of(&App::Video { preset, packet_size: crate::default_video_packet() }).expect("a video source")
}

/// The sources whose parameters are in the app alone.
fn source_params_of(app: &App) -> Option<SourceParams> {
    Some(match *app {
        App::Cbr { size, interval } => SourceParams::Cbr(CbrParams { size, interval }),
        App::Onoff { size, rate, on, off, periods } => SourceParams::OnOff(OnOffParams {
            size,
            rate,
            on,
            off,
            periods: match periods {
                Periods::Constant => lasthop_core::traffic::Periods::Constant,
                Periods::Exponential => lasthop_core::traffic::Periods::Exponential,
            },
        }),
        App::Video { preset, packet_size } => SourceParams::Video(VideoParams {
            model: match preset {
                VideoPreset::StarwarsMpeg4High => VideoModel::STARWARS_MPEG4_HIGH,
                VideoPreset::StarwarsMpeg4Medium => VideoModel::STARWARS_MPEG4_MEDIUM,
                VideoPreset::StarwarsMpeg4Low => VideoModel::STARWARS_MPEG4_LOW,
                VideoPreset::LectureMpeg4Medium => VideoModel::LECTURE_MPEG4_MEDIUM,
                VideoPreset::LectureMpeg4Low => VideoModel::LECTURE_MPEG4_LOW,
            },
            packet_size,
        }),
        App::Bulk { .. } | App::File { .. } | App::Stochastic { .. } | App::Preset { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lasthop_core::units::BitRate;
    use lasthop_core::Duration;

    const SCENARIO: &str = r#"
[simulation]
duration = "10s"
seed = 7

[[nodes]]
name = "a"

[[nodes]]
name = "b"

[[links]]
name = "a-b"
a = "a"
b = "b"
rate = "10Mbps"
delay = "10ms"

[[flows]]
name = "file"
src = "a"
dst = "b"
app = { type = "file", bytes = "1MiB", send_delay = "2ms" }

[[flows]]
name = "slow-reader"
src = "a"
dst = "b"
app = { type = "bulk" }
tcp = { read_rate = "1Mbps" }

[[flows]]
name = "voice-over-tcp"
src = "a"
dst = "b"
transport = "tcp"
app = { type = "cbr", size = "160B", interval = "20ms" }

[[flows]]
name = "video"
src = "a"
dst = "b"
app = { type = "video", preset = "starwars-mpeg4-high" }
"#;

    fn apps() -> Vec<FlowApp> {
        let s = Scenario::from_toml_str(SCENARIO, "apps.toml", &[]).expect("valid scenario");
        let rng = RngStreams::new(s.simulation.seed);
        s.flows.iter().map(|f| flow_app(&s, f, &rng)).collect()
    }

    #[test]
    fn a_file_loop_gets_paper_000s_defaults_for_what_is_not_given() {
        // message 4096 B and app_buffer 8 KiB (Hur & Hong's best), the given 2 ms send delay.
        let a = &apps()[0];
        assert!(a.messages.is_none());
        assert_eq!(a.transfer.volume, Volume::Bytes(1 << 20));
        let Calls::FileLoop(l) = a.transfer.calls else { panic!("file loop expected, got {:?}", a.transfer.calls) };
        assert_eq!((l.message, l.app_buffer), (Bytes(4096), Bytes(8192)));
        assert_eq!((l.send_delay, l.receive_delay), (Duration::from_millis(2), Duration::ZERO));
    }

    #[test]
    fn a_read_rate_paces_reads_of_8_kib() {
        let a = &apps()[1];
        assert_eq!(a.transfer.volume, Volume::UntilStopped);
        assert_eq!(a.transfer.calls, Calls::PacedReads(PacedReads { rate: BitRate(1_000_000), size: Bytes(8192) }));
    }

    #[test]
    fn cbr_over_tcp_queues_messages_from_a_cbr_schedule() {
        let a = &apps()[2];
        assert_eq!(a.transfer.volume, Volume::Messages);
        let at: Vec<u64> = a.messages.clone().expect("a CBR schedule").take(3).map(|d| d.at.0 / 1_000_000).collect();
        assert_eq!(at, vec![0, 20, 40]);
    }

    #[test]
    fn a_source_draws_from_the_flows_app_stream() {
        // The stream name `flow/<name>/app` is part of the results' identity: the same seed and
        // name must give the departures of the core source on that stream.
        let a = &apps()[3];
        let params = SourceParams::Video(VideoParams { model: VideoModel::STARWARS_MPEG4_HIGH, packet_size: Bytes(1472) });
        let expected = Schedule::new(params, RngStreams::new(7).stream("flow/video/app"));
        let got = a.messages.clone().expect("a video schedule");
        assert_eq!(got.max_packet(), 1472);
        assert!(got.take(1000).eq(expected.take(1000)));
    }
}
