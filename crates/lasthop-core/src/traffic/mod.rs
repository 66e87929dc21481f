//! Traffic sources as pure schedules of (time offset, size), the same in every world: the
//! simulator turns a [`Departure`] into an event, a real-socket generator (D-ITG style) into a
//! sleep and a `send()`. A source is built from typed parameters (plain numbers, [`Duration`]s,
//! [`Bytes`]) and draws only from the random stream it is handed, so the same parameters, seed
//! and stream name give the same departures everywhere.
//!
//! The models:
//! - [`CbrParams`] constant bit rate: `size` bytes every `interval` (D-ITG's `-C`/`-c`; the
//!   home scenario's game and voice flows, whose figures are the SAP-LAW paper's own, Palazzi
//!   et al. 2006 §4 — `../shared/reference/models.md` §4 explains why they are not Färber's
//!   Gumbel model).
//! - [`OnOffParams`] CBR at `rate` while on, silent while off, with constant or exponential
//!   period lengths (ns-2/ns-3 `OnOffApplication`; D-ITG's `-B on off`). Each on period starts
//!   with a packet, so a period of length L carries ⌈L/IDT⌉ packets.
//! - [`VideoParams`] synthetic MPEG-4 VBR video calibrated to the TKN traces (Fitzek & Reisslein,
//!   IEEE Network 15(6), 2001) by the recipe of models.md §5.4: one frame every 40 ms, GoP
//!   IBBPBBPBBPBB, frame = m_type · S_scene · E_frame with lognormal S and E, clipped at the
//!   trace's largest frame; a frame longer than a packet leaves as back-to-back packets
//!   ([`fragments`]).
//! - [`transfer`] TCP transfers: a byte count (or greedy until stopped, or a message source's
//!   backlog) with the pacing of the two applications' socket calls (paced reads, Hur & Hong's
//!   file loop); [`Writer`] tracks what the sending application still wants to write.
//!
//! - [`StochasticParams`] D-ITG's model: inter-departure times and sizes drawn from any
//!   [`Dist`] (constant, uniform, exponential, normal, Poisson, Pareto, Cauchy, gamma, Weibull,
//!   values cycled from a file), optional on/off bursts with drawn periods (`-B`), count and
//!   byte limits (`-z`, `-k`) after which the source is due at [`NEVER`]; [`Preset`] holds
//!   D-ITG's VoIP, Telnet, DNS, Quake 3 and Counter-Strike presets with its source's numbers.
//!
//! Modules: [`cbr`], [`onoff`], [`video`], [`transfer`], [`stochastic`] (with [`dist`], the
//! laws it draws from, and [`presets`], D-ITG's application presets).
//!
//! Left out: D-ITG's payload files (`-Fp`) and its exact random draws. The other sources are
//! endless and their user stops at the flow's stop time. The video model reproduces mean rate,
//! frame and GoP variability and the peak, not the long-range dependence of the real traces.

pub mod cbr;
pub mod dist;
pub mod onoff;
pub mod presets;
pub mod stochastic;
pub mod transfer;
pub mod video;

pub use cbr::CbrParams;
pub use dist::{Dist, DistError};
pub use onoff::{OnOffParams, Periods};
pub use presets::{Codec, Preset, VoipHeader};
pub use stochastic::{Bursts, StochasticParams};
pub use transfer::{Calls, FileLoop, PacedReads, Transfer, Volume, Writer};
pub use video::{VideoModel, VideoParams};

use crate::rng::SimRng;
use crate::time::Duration;
#[cfg(doc)]
use crate::units::Bytes;
use rand_core::RngCore;

/// One message of a source: when it leaves, counted from the source's start, and its size
/// (a datagram's payload, or a whole video frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub at: Duration,
    pub bytes: u32,
}

/// When a source that has sent all it may (a count or byte limit) is due: never. The largest
/// time, so `start + NEVER` saturates to the end of time and is past any stop.
pub const NEVER: Duration = Duration(u64::MAX);

/// The parameters of a message source.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceParams {
    Cbr(CbrParams),
    OnOff(OnOffParams),
    Video(VideoParams),
    Stochastic(StochasticParams),
}

/// The state of one model; dispatched with `match` (no `dyn` on the per-packet path).
#[derive(Clone, Debug)]
enum Model {
    Cbr(CbrParams),
    OnOff(onoff::OnOff),
    Video(video::Video),
    /// Boxed once when built: its samplers are larger than the other models.
    Stochastic(Box<stochastic::Stochastic>),
}

/// A message source: asked for its next departure with the random stream to draw from.
#[derive(Clone, Debug)]
pub struct Source {
    model: Model,
    /// When the previous message left; `None` before the first.
    last: Option<Duration>,
}

impl Source {
    pub fn new(params: SourceParams) -> Source {
        let model = match params {
            SourceParams::Cbr(p) => Model::Cbr(p),
            SourceParams::OnOff(p) => Model::OnOff(onoff::OnOff::new(p)),
            SourceParams::Video(p) => Model::Video(video::Video::new(p)),
            SourceParams::Stochastic(p) => Model::Stochastic(Box::new(stochastic::Stochastic::new(&p))),
        };
        Source { model, last: None }
    }

    /// The next message. Its time is drawn before its size, so a model that draws both keeps
    /// one fixed order of draws on its stream.
    pub fn next(&mut self, rng: &mut impl RngCore) -> Departure {
        let (at, bytes) = match &mut self.model {
            Model::Cbr(c) => (c.departure_after(self.last), c.size_u32()),
            Model::OnOff(o) => {
                let at = o.departure_after(self.last, rng);
                (at, o.size())
            }
            Model::Video(v) => {
                let at = video::departure_after(self.last);
                (at, v.next_frame_bytes(rng))
            }
            Model::Stochastic(s) => s.next(self.last, rng),
        };
        self.last = Some(at);
        Departure { at, bytes }
    }

    /// Largest datagram payload: a longer message (a video frame) is cut into several.
    pub fn max_packet(&self) -> u32 {
        match &self.model {
            Model::Cbr(c) => c.size_u32(),
            Model::OnOff(o) => o.size(),
            Model::Video(v) => v.packet_size(),
            Model::Stochastic(s) => s.max_packet(),
        }
    }
}

/// A source with its own random stream and the departure it is waiting for: what a flow keeps
/// between two sends. Also an endless iterator of departures.
#[derive(Clone, Debug)]
pub struct Schedule {
    source: Source,
    rng: SimRng,
    due: Departure,
}

impl Schedule {
    /// Draws the first departure at once.
    pub fn new(params: SourceParams, mut rng: SimRng) -> Schedule {
        let mut source = Source::new(params);
        let due = source.next(&mut rng);
        Schedule { source, rng, due }
    }

    /// The departure being waited for.
    pub fn due(&self) -> Departure {
        self.due
    }

    /// Takes the due departure (its message is being sent) and draws the one after it.
    pub fn pop(&mut self) -> Departure {
        let sent = self.due;
        self.due = self.source.next(&mut self.rng);
        sent
    }

    pub fn max_packet(&self) -> u32 {
        self.source.max_packet()
    }

    /// Whether the source has sent all it may: its due departure is at [`NEVER`].
    pub fn finished(&self) -> bool {
        self.due.at == NEVER
    }
}

impl Iterator for Schedule {
    type Item = Departure;
    fn next(&mut self) -> Option<Departure> {
        Some(self.pop())
    }
}

/// The datagram payloads a message of `bytes` leaves as: full packets of `max_packet`, then
/// the rest (ns-3's `UdpTraceClient` cuts frames the same way).
pub fn fragments(bytes: u32, max_packet: u32) -> Fragments {
    Fragments { left: bytes, max: max_packet.max(1) }
}

/// Iterator returned by [`fragments`].
#[derive(Clone, Copy, Debug)]
pub struct Fragments {
    left: u32,
    max: u32,
}

impl Iterator for Fragments {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        let size = self.left.min(self.max);
        self.left -= size;
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStreams;
    use crate::units::{BitRate, Bytes};

    fn cbr() -> SourceParams {
        SourceParams::Cbr(CbrParams { size: Bytes(160), interval: Duration::from_millis(20) })
    }

    #[test]
    fn schedule_pops_what_was_due_and_iterates_the_same_departures() {
        let mut s = Schedule::new(cbr(), RngStreams::new(1).stream("x"));
        assert_eq!(s.due(), Departure { at: Duration::ZERO, bytes: 160 });
        assert_eq!(s.pop(), Departure { at: Duration::ZERO, bytes: 160 });
        assert_eq!(s.due().at, Duration::from_millis(20));
        let next: Vec<u64> = s.take(3).map(|d| d.at.0 / 1_000_000).collect();
        assert_eq!(next, vec![20, 40, 60]);
    }

    #[test]
    fn schedule_gives_the_same_departures_as_the_bare_source_on_the_same_stream() {
        // The schedule only holds the stream; it must not draw differently from a caller that
        // keeps the stream itself (the simulator and a generator must agree).
        let p = SourceParams::OnOff(OnOffParams {
            size: Bytes(500),
            rate: BitRate(1_000_000),
            on: Duration::from_millis(50),
            off: Duration::from_millis(80),
            periods: Periods::Exponential,
        });
        let streams = RngStreams::new(9);
        let a: Vec<Departure> = Schedule::new(p.clone(), streams.stream("f")).take(500).collect();
        let mut src = Source::new(p);
        let mut rng = streams.stream("f");
        let b: Vec<Departure> = (0..500).map(|_| src.next(&mut rng)).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn fragments_cut_a_frame_into_full_packets_and_the_rest() {
        // 3000 = 1472 + 1472 + 56.
        assert_eq!(fragments(3000, 1472).collect::<Vec<_>>(), vec![1472, 1472, 56]);
        assert_eq!(fragments(1472, 1472).collect::<Vec<_>>(), vec![1472]);
        assert_eq!(fragments(0, 1472).count(), 0);
    }

    #[test]
    fn max_packet_is_the_message_size_except_for_video() {
        assert_eq!(Source::new(cbr()).max_packet(), 160);
        let v = SourceParams::Video(VideoParams { model: VideoModel::STARWARS_MPEG4_HIGH, packet_size: Bytes(1000) });
        assert_eq!(Source::new(v).max_packet(), 1000);
    }
}
