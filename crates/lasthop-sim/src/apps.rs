//! Applications: what writes into a flow and when. Each is a small state machine asked by the
//! simulator "what now?" with the current time, so none of them knows about events or packets.
//!
//! - [`Source`] for message sources: CBR (constant size and inter-departure time, as D-ITG's
//!   `-C`/`-c`) and on/off (CBR at `rate` during on periods; constant or exponential periods).
//! - [`Transfer`] for TCP writers: greedy bulk (optionally N bytes) and file transfers of N bytes.

use crate::scenario::{App, Periods};
use lasthop_core::rng::{exponential, SimRng};
use lasthop_core::{Duration, Time};

/// A CBR or on/off message source.
#[derive(Debug)]
pub struct Source {
    size: u32,
    interval: Duration,
    onoff: Option<OnOff>,
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
            App::Cbr { size, interval } => Some(Source { size: size.0 as u32, interval, onoff: None }),
            App::Onoff { size, rate, on, off, periods } => Some(Source {
                size: size.0 as u32,
                // While on: one packet of `size` payload bytes every size·8/rate.
                interval: rate.tx_time(size.0),
                onoff: Some(OnOff { on, off, periods, rng, on_until: Time::ZERO }),
            }),
            _ => None,
        }
    }

    pub fn size(&self) -> u32 {
        self.size
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
            App::File { bytes } => Some(bytes.0),
            App::Cbr { .. } | App::Onoff { .. } => Some(0),
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
