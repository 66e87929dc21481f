//! The scenario's words for D-ITG's traffic (the `stochastic` and `preset` apps of a flow): an
//! inter-departure or period law ([`TimeDist`], durations such as "10ms"), a payload size law
//! ([`SizeDist`], sizes such as "160B"), the [`PresetName`]s, and the conversion of each into
//! the core's [`Dist`] (nanoseconds, bytes) with the parameter that is wrong named.
//!
//! D-ITG users' flags map as the core's `traffic::dist` module documents: `-C r` is
//! `{ dist = "constant", rate = r }`, `-U a b` is uniform from 1000/b ms to 1000/a ms, `-E r` is
//! `{ dist = "exponential", rate = r }`, `-O r` is `{ dist = "poisson", rate = r }` (1 s over a
//! Poisson count, D-ITG's meaning), `-V a b` pareto shape a scale b ms, `-Y a b` cauchy location
//! a scale b ms, `-G a b` gamma shape a scale b ms, `-W a b` weibull **scale a, shape b** (what
//! ITGSend does, whatever its help text says), `-Ft f` `{ dist = "file", path = "f" }`.
//!
//! Files (`dist = "file"`) are read when the scenario loads, relative to the scenario file's
//! folder, and replaced by the `values` they hold, so a run's resolved scenario carries the
//! numbers. An IDT file is D-ITG's `-Ft` format: one IDT in milliseconds per line, the first
//! line being the delay before the first packet (ITGSend.cpp 1612, 2581) and the IDTs cycling
//! from the second line through the first. A size file is `-Fs`: one size in bytes per line
//! (1 to 65 536), cycled from the first. Blank lines are skipped, as D-ITG skips them.

use crate::{App, Flow, Scenario, ScenarioError, MIN_PACKET_INTERVAL};
use lasthop_core::traffic::{Codec, Dist, DistError, Preset, VoipHeader as CoreHeader};
use lasthop_core::units::Bytes;
use lasthop_core::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A law of inter-departure times (or of on/off period lengths).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum TimeDist {
    /// Always `value`, or every 1/`rate` s with `rate` in packets per second (D-ITG `-C rate`).
    Constant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Duration>,
        /// Packets per second.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
    },
    /// Uniform between `min` and `max` (D-ITG `-U a b`: min = 1000/b ms, max = 1000/a ms).
    Uniform { min: Duration, max: Duration },
    /// Exponential with mean `mean`, or with `rate` packets per second (D-ITG `-E rate`): a
    /// Poisson process.
    Exponential {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean: Option<Duration>,
        /// Packets per second.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
    },
    /// Normal; draws below zero send at once (D-ITG `-N mean sd`).
    Normal { mean: Duration, sd: Duration },
    /// D-ITG's `-O rate`: 1 s divided by a Poisson count of mean `rate` (a count of 0 is drawn
    /// again). Not a Poisson process: for that use "exponential".
    Poisson {
        /// Mean of the Poisson count, in packets per second.
        rate: f64,
    },
    /// Pareto with minimum `scale` (D-ITG `-V shape scale`).
    Pareto { shape: f64, scale: Duration },
    /// Cauchy centred on `location`; negative draws send at once (D-ITG `-Y location scale`).
    Cauchy { location: Duration, scale: Duration },
    /// Gamma, mean shape × scale (D-ITG `-G shape scale`).
    Gamma { shape: f64, scale: Duration },
    /// Weibull (D-ITG `-W scale shape`: ITGSend takes the scale first).
    Weibull { shape: f64, scale: Duration },
    /// These IDTs in order, cycled; the first message leaves `first` after the flow starts.
    Values {
        values: Vec<Duration>,
        #[serde(default)]
        first: Duration,
    },
    /// A D-ITG `-Ft` file (module doc), read on load into "values".
    File { path: String },
}

/// A law of payload sizes (the UDP or TCP payload, as D-ITG's PS). Draws are cut to whole
/// bytes and kept within 16 B..64 000 B, as D-ITG does.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDist {
    /// Always `value` (D-ITG `-c`).
    Constant { value: Bytes },
    /// Uniform between `min` and `max` (D-ITG `-u min max`).
    Uniform { min: Bytes, max: Bytes },
    /// Exponential with mean `mean` (D-ITG `-e mean`).
    Exponential { mean: Bytes },
    /// Normal (D-ITG `-n mean sd`).
    Normal { mean: Bytes, sd: Bytes },
    /// A Poisson count of mean `mean` bytes (D-ITG `-o mean`).
    Poisson { mean: Bytes },
    /// Pareto with minimum `scale` (D-ITG `-v shape scale`).
    Pareto { shape: f64, scale: Bytes },
    /// Cauchy centred on `location` (D-ITG `-y location scale`).
    Cauchy { location: Bytes, scale: Bytes },
    /// Gamma, mean shape × scale (D-ITG `-g shape scale`).
    Gamma { shape: f64, scale: Bytes },
    /// Weibull (D-ITG `-w scale shape`).
    Weibull { shape: f64, scale: Bytes },
    /// These sizes in order, cycled.
    Values { values: Vec<Bytes> },
    /// A D-ITG `-Fs` file (module doc), read on load into "values".
    File { path: String },
}

/// A named traffic model: D-ITG's presets (numbers from its `src/ITGSend/traffic.cpp`), the
/// home scenario's game flows and the synthetic video traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum PresetName {
    /// G.711, 1 frame per packet: 100 pkt/s of 92 B with RTP (D-ITG `VoIP -x G.711.1`).
    #[serde(rename = "voip-g711.1")]
    VoipG711x1,
    /// G.711, 2 frames: 50 pkt/s of 172 B.
    #[serde(rename = "voip-g711.2")]
    VoipG711x2,
    /// G.729, 2 frames: 50 pkt/s of 32 B.
    #[serde(rename = "voip-g729.2")]
    VoipG729x2,
    /// G.729, 3 frames: 33 pkt/s of 42 B.
    #[serde(rename = "voip-g729.3")]
    VoipG729x3,
    /// G.723.1: 26 pkt/s of 42 B.
    #[serde(rename = "voip-g723.1")]
    VoipG723x1,
    /// Telnet over TCP: Pareto IDTs from 1.1 ms (shape 0.95), 21–35 B.
    #[serde(rename = "telnet")]
    Telnet,
    /// DNS: a request every 1.786 s (0.56 pkt/s), 100–319 B.
    #[serde(rename = "dns")]
    Dns,
    /// Quake 3: about 145 pkt/s of about 64 B.
    #[serde(rename = "quake3")]
    Quake3,
    /// Counter-Strike, active player (D-ITG `CSa`): about 24 pkt/s, about 44 B.
    #[serde(rename = "cs-active")]
    CsActive,
    /// Counter-Strike, idle player (D-ITG `CSi`): about 24 pkt/s, 27–35 B.
    #[serde(rename = "cs-idle")]
    CsIdle,
    /// The home scenario's game, server to client: 200 B every 50 ms (Palazzi et al. 2006 §4).
    #[serde(rename = "game-down")]
    GameDown,
    /// The home scenario's game, client to server: 42 B every 60 ms (Palazzi et al. 2006 §4).
    #[serde(rename = "game-up")]
    GameUp,
    /// Synthetic Star Wars IV MPEG-4 high quality (the "video" app's preset).
    #[serde(rename = "video-starwars-mpeg4-high")]
    VideoStarwarsMpeg4High,
    #[serde(rename = "video-starwars-mpeg4-medium")]
    VideoStarwarsMpeg4Medium,
    #[serde(rename = "video-starwars-mpeg4-low")]
    VideoStarwarsMpeg4Low,
    #[serde(rename = "video-lecture-mpeg4-medium")]
    VideoLectureMpeg4Medium,
    #[serde(rename = "video-lecture-mpeg4-low")]
    VideoLectureMpeg4Low,
}

/// The voice packets' header (D-ITG `-h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VoipHeader {
    /// RTP, 12 bytes (the default).
    #[default]
    Rtp,
    /// Compressed RTP, 2 bytes.
    Crtp,
}

impl PresetName {
    /// The D-ITG preset it names, if one (VoIP takes the header and VAD).
    pub fn ditg(self, header: VoipHeader, vad: bool) -> Option<Preset> {
        let header = match header {
            VoipHeader::Rtp => CoreHeader::Rtp,
            VoipHeader::Crtp => CoreHeader::Crtp,
        };
        let voip = |codec| Some(Preset::Voip { codec, header, vad });
        match self {
            PresetName::VoipG711x1 => voip(Codec::G711x1),
            PresetName::VoipG711x2 => voip(Codec::G711x2),
            PresetName::VoipG729x2 => voip(Codec::G729x2),
            PresetName::VoipG729x3 => voip(Codec::G729x3),
            PresetName::VoipG723x1 => voip(Codec::G723x1),
            PresetName::Telnet => Some(Preset::Telnet),
            PresetName::Dns => Some(Preset::Dns),
            PresetName::Quake3 => Some(Preset::Quake3),
            PresetName::CsActive => Some(Preset::CounterStrikeActive),
            PresetName::CsIdle => Some(Preset::CounterStrikeIdle),
            _ => None,
        }
    }

    pub fn is_voip(self) -> bool {
        matches!(
            self,
            PresetName::VoipG711x1
                | PresetName::VoipG711x2
                | PresetName::VoipG729x2
                | PresetName::VoipG729x3
                | PresetName::VoipG723x1
        )
    }

    pub fn is_video(self) -> bool {
        matches!(
            self,
            PresetName::VideoStarwarsMpeg4High
                | PresetName::VideoStarwarsMpeg4Medium
                | PresetName::VideoStarwarsMpeg4Low
                | PresetName::VideoLectureMpeg4Medium
                | PresetName::VideoLectureMpeg4Low
        )
    }
}

const NS_PER_S: f64 = 1e9;

fn ns(d: Duration) -> f64 {
    d.0 as f64
}

fn b(x: Bytes) -> f64 {
    x.0 as f64
}

/// Exactly one of two alternative fields.
fn one_of(a: Option<f64>, rate: Option<f64>, a_name: &'static str) -> Result<f64, DistError> {
    match (a, rate) {
        (Some(v), None) => Ok(v),
        (None, Some(r)) => {
            if r.is_finite() && r > 0.0 {
                Ok(NS_PER_S / r)
            } else {
                Err(DistError { param: "rate", valid: "must be a positive number of packets per second".into() })
            }
        }
        (Some(_), Some(_)) => Err(DistError { param: a_name, valid: format!("give {a_name} or rate, not both") }),
        (None, None) => Err(DistError { param: a_name, valid: format!("missing: give {a_name} (a duration) or rate (packets per second)") }),
    }
}

impl TimeDist {
    /// The core law in nanoseconds and the first message's offset.
    pub fn to_core(&self) -> Result<(Dist, Duration), DistError> {
        let d = match self {
            TimeDist::Constant { value, rate } => Dist::constant(one_of(value.map(ns), *rate, "value")?)?,
            TimeDist::Uniform { min, max } => Dist::uniform(ns(*min), ns(*max))?,
            TimeDist::Exponential { mean, rate } => Dist::exponential(one_of(mean.map(ns), *rate, "mean")?)?,
            TimeDist::Normal { mean, sd } => Dist::normal(ns(*mean), ns(*sd))?,
            TimeDist::Poisson { rate } => Dist::per_poisson_count(NS_PER_S, *rate)?,
            TimeDist::Pareto { shape, scale } => Dist::pareto(*shape, ns(*scale))?,
            TimeDist::Cauchy { location, scale } => Dist::cauchy(ns(*location), ns(*scale))?,
            TimeDist::Gamma { shape, scale } => Dist::gamma(*shape, ns(*scale))?,
            TimeDist::Weibull { shape, scale } => Dist::weibull(*shape, ns(*scale))?,
            TimeDist::Values { values, first } => return Ok((Dist::cycle(values.iter().map(|v| ns(*v)).collect())?, *first)),
            TimeDist::File { .. } => {
                return Err(DistError { param: "path", valid: "a file is read when the scenario loads".into() })
            }
        };
        Ok((d, Duration::ZERO))
    }
}

impl SizeDist {
    /// The core law in bytes.
    pub fn to_core(&self) -> Result<Dist, DistError> {
        match self {
            SizeDist::Constant { value } => Dist::constant(b(*value)),
            SizeDist::Uniform { min, max } => Dist::uniform(b(*min), b(*max)),
            SizeDist::Exponential { mean } => Dist::exponential(b(*mean)),
            SizeDist::Normal { mean, sd } => Dist::normal(b(*mean), b(*sd)),
            SizeDist::Poisson { mean } => Dist::poisson(b(*mean)),
            SizeDist::Pareto { shape, scale } => Dist::pareto(*shape, b(*scale)),
            SizeDist::Cauchy { location, scale } => Dist::cauchy(b(*location), b(*scale)),
            SizeDist::Gamma { shape, scale } => Dist::gamma(*shape, b(*scale)),
            SizeDist::Weibull { shape, scale } => Dist::weibull(*shape, b(*scale)),
            SizeDist::Values { values } => Dist::cycle(values.iter().map(|v| b(*v)).collect()),
            SizeDist::File { .. } => Err(DistError { param: "path", valid: "a file is read when the scenario loads".into() }),
        }
    }
}

/// Reads a traffic file named in a scenario, relative to the scenario file's folder: a regular
/// file of at most `input::traffic_file_max()` bytes.
fn read(base: &Path, path: &str, field: &str) -> Result<String, String> {
    let full = base.join(path);
    crate::input::read_text(&full, crate::input::traffic_file_max(), Some(crate::input::TRAFFIC_FILE_MAX_ENV))
        .map_err(|e| format!("{field}: cannot read {:?} ({}): {e}", path, full.display()))
}

/// How a message shows a bad line: quoted once earlier lines held values (a traffic file with a
/// typo), or when it looks like a number; otherwise not at all, so that the first line of a file
/// that is no traffic file (a wrong path: `/etc/shadow`) is never echoed.
fn shown(l: &str, after_values: bool) -> String {
    match crate::input::quotable(l) {
        Some(q) => format!("{q:?}"),
        None if after_values => format!("{:?}", l.chars().take(40).collect::<String>()),
        None => "the first line".to_string(),
    }
}

/// The lines that hold a value, numbered from 1 (blank lines are skipped).
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty())
}

/// A D-ITG `-Ft` file as `values` (module doc).
pub fn read_idt_file(base: &Path, path: &str, field: &str) -> Result<TimeDist, String> {
    let text = read(base, path, field)?;
    let mut ms = Vec::new();
    for (n, l) in lines(&text) {
        match l.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 && x <= 1e9 => ms.push(x),
            _ => {
                return Err(format!(
                    "{field}: {path:?} line {n}: {} is not an inter-departure time; valid: one positive number of milliseconds per line (D-ITG's -Ft format)", shown(l, !ms.is_empty())
                ))
            }
        }
    }
    let Some(&delay) = ms.first() else {
        return Err(format!("{field}: {path:?} holds no value; valid: one positive number of milliseconds per line"));
    };
    ms.rotate_left(1);
    let values = ms.iter().map(|x| Duration((x * 1e6).round() as u64)).collect();
    // The start delay is whole milliseconds, floored, as ITGSend makes it (2.8.1 r1023,
    // ITGSend.cpp 1612: `Delay = (long int) floor(flows[id].vectTime[0]);`, a delay in ms that
    // 2530-2531 turn into the flow's start time); the IDTs keep their fractions (strtod, 1603).
    Ok(TimeDist::Values { values, first: Duration::from_millis(delay.floor() as u64) })
}

/// A D-ITG `-Fs` file as `values`.
pub fn read_size_file(base: &Path, path: &str, field: &str) -> Result<SizeDist, String> {
    let text = read(base, path, field)?;
    let mut values = Vec::new();
    for (n, l) in lines(&text) {
        match l.parse::<u64>() {
            Ok(x) if (1..=65_536).contains(&x) => values.push(Bytes(x)),
            _ => {
                return Err(format!(
                    "{field}: {path:?} line {n}: {} is not a packet size; valid: one whole number of bytes from 1 to 65536 per line (D-ITG's -Fs format)", shown(l, !values.is_empty())
                ))
            }
        }
    }
    if values.is_empty() {
        return Err(format!("{field}: {path:?} holds no value; valid: one size in bytes per line"));
    }
    Ok(SizeDist::Values { values })
}

impl Scenario {
    /// Replaces every traffic file by the values it holds; `file` is the scenario's path.
    pub(crate) fn resolve_traffic_files(&mut self, file: &str) -> Result<(), ScenarioError> {
        let base = Path::new(file).parent().unwrap_or(Path::new("")).to_path_buf();
        let mut problems = Vec::new();
        for (i, f) in self.flows.iter_mut().enumerate() {
            let fid = format!("flows[{i}] ({:?}).app", f.name);
            if let App::Stochastic { idt, size, on, off, .. } = &mut f.app {
                let _ = (on, off); // D-ITG's -B takes no files; validation says so for on/off.
                if let TimeDist::File { path } = idt {
                    match read_idt_file(&base, path, &format!("{fid}.idt.path")) {
                        Ok(v) => *idt = v,
                        Err(e) => problems.push(e),
                    }
                }
                if let SizeDist::File { path } = size {
                    match read_size_file(&base, path, &format!("{fid}.size.path")) {
                        Ok(v) => *size = v,
                        Err(e) => problems.push(e),
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError { file: file.to_string(), problems })
        }
    }
}

impl Scenario {
    /// The checks of a `stochastic` or `preset` app: every law converts, the IDT is not below
    /// the packet-interval floor, on and off come together, VoIP options only on VoIP presets.
    pub(crate) fn validate_ditg_app(&self, f: &Flow, fid: &str, p: &mut Vec<String>) {
        let bad = |field: &str, e: DistError| format!("{fid}.app.{field}.{}: {}", e.param, e.valid);
        match &f.app {
            App::Stochastic { idt, size, on, off, .. } => {
                match idt.to_core() {
                    Ok((d, _)) if d.typical() < MIN_PACKET_INTERVAL.0 as f64 => p.push(format!(
                        "{fid}.app.idt: the typical inter-departure time ({} ns, {d}) is below the {MIN_PACKET_INTERVAL} floor; valid: laws whose mean, median or scale is at least {MIN_PACKET_INTERVAL}",
                        d.typical()
                    )),
                    Ok(_) => {}
                    Err(e) => p.push(bad("idt", e)),
                }
                if let Err(e) = size.to_core() {
                    p.push(bad("size", e));
                }
                if on.is_some() != off.is_some() {
                    p.push(format!("{fid}.app: on and off come together (D-ITG's -B takes both); give both or neither"));
                }
                for (name, d) in [("on", on), ("off", off)] {
                    match d {
                        Some(TimeDist::File { .. }) => p.push(format!(
                            "{fid}.app.{name}: a file gives inter-departure times; valid for on/off periods: constant, uniform, exponential, normal, poisson, pareto, cauchy, gamma, weibull, values"
                        )),
                        Some(TimeDist::Values { first, .. }) if first.0 > 0 => {
                            p.push(format!("{fid}.app.{name}.first applies to inter-departure times only; remove it"))
                        }
                        Some(d) => {
                            if let Err(e) = d.to_core() {
                                p.push(bad(name, e));
                            }
                        }
                        None => {}
                    }
                }
            }
            App::Preset { name, header, vad, count, bytes } => {
                if !name.is_voip() && (header.is_some() || *vad) {
                    p.push(format!("{fid}.app: header and vad apply to the voip-* presets only"));
                }
                if name.is_video() && (count.is_some() || bytes.is_some()) {
                    p.push(format!("{fid}.app: count and bytes do not apply to the video presets; use the flow's stop time"));
                }
            }
            _ => {}
        }
    }
}
