//! End hosts that take time: the slow receiver of Hur & Hong (paper 000).
//!
//! A [`DeviceModel`] is one CPU shared, first come first served and without preemption, by
//! the protocol processing of every packet the host receives and by its applications' work:
//! each socket call, the copy between application and socket, and file-system reads and writes.
//! A packet that arrives while the application writes to flash waits until the write is done,
//! so its ACK leaves late — the mechanism behind the paper's delayed window updates. Sleeps
//! are rounded up to the host's timer granularity (Windows 2000's `Sleep(1)` sleeps a 10 ms
//! tick). Nodes without a device are infinitely fast, as before.
//!
//! [`FileSender`] and [`FileReceiver`] are the two ends of a file transfer over TCP driven by
//! such hosts: the sender reads the file in `app_buffer` pieces and hands the socket `message`
//! bytes per blocking `send()`, sleeping `send_delay` after each (the paper's inter-packet
//! delay); the receiver `recv()`s up to `app_buffer` bytes, writes them to storage and sleeps
//! `receive_delay`.

use lasthop_core::units::BitRate;
use lasthop_scenario::{Device, DevicePreset, Scenario};
use lasthop_core::{Duration, Time};

const MIB: f64 = 1024.0 * 1024.0;

/// Storage of a device: sequential read and write throughput (`None`: free), a cost per
/// operation, and a write cost that grows with the file already written (flash file systems,
/// paper 000 Table 5).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StorageModel {
    pub read_rate: Option<BitRate>,
    pub write_rate: Option<BitRate>,
    pub op_cost: Duration,
    /// Relative growth of the per-byte write cost per MiB already in the file.
    pub write_growth_per_mib: f64,
}

impl StorageModel {
    /// Time to read `n` bytes in operations of at most `chunk` bytes.
    pub fn read_time(&self, n: u64, chunk: u64) -> Duration {
        Duration(ops(n, chunk) * self.op_cost.0 + self.read_rate.map_or(0, |r| r.tx_time(n).0))
    }

    /// Time to append `n` bytes to a file that already holds `offset` bytes, in operations of at
    /// most `chunk` bytes. The per-byte cost at file offset x is w·(1 + g·x/MiB), integrated
    /// over [offset, offset + n].
    pub fn write_time(&self, offset: u64, n: u64, chunk: u64) -> Duration {
        let mid = offset as f64 + n as f64 / 2.0;
        let base = self.write_rate.map_or(0, |r| r.tx_time(n).0) as f64;
        let growth = 1.0 + self.write_growth_per_mib * mid / MIB;
        Duration(ops(n, chunk) * self.op_cost.0 + (base * growth).round() as u64)
    }
}

fn ops(n: u64, chunk: u64) -> u64 {
    n.div_ceil(chunk.max(1))
}

/// What work costs an end host. `Default` is the infinitely fast host.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceModel {
    /// Protocol processing of one received packet (interrupt, driver, IP/TCP input, ACK).
    pub packet_cost: Duration,
    /// One socket `send()` or `recv()` call.
    pub call_cost: Duration,
    /// Copying between application and socket; `None` costs nothing.
    pub copy_rate: Option<BitRate>,
    pub storage: Option<StorageModel>,
    /// Sleeps last a whole number of timer ticks (0: exact).
    pub timer_granularity: Duration,
}

impl DeviceModel {
    /// Application work of one `send()` of `n` bytes read from storage in `chunk`-byte pieces.
    pub fn send_cost(&self, n: u64, chunk: u64) -> Duration {
        let read = self.storage.map_or(Duration::ZERO, |s| s.read_time(n, chunk));
        Duration(self.call_cost.0 + self.copy(n).0 + read.0)
    }

    /// Application work of one `recv()` of `n` bytes appended to a file holding `offset` bytes.
    pub fn receive_cost(&self, offset: u64, n: u64, chunk: u64) -> Duration {
        let write = self.storage.map_or(Duration::ZERO, |s| s.write_time(offset, n, chunk));
        Duration(self.call_cost.0 + self.copy(n).0 + write.0)
    }

    fn copy(&self, n: u64) -> Duration {
        self.copy_rate.map_or(Duration::ZERO, |r| r.tx_time(n))
    }

    /// How long `Sleep(d)` lasts: `d` rounded up to whole timer ticks; 0 stays 0.
    pub fn sleep(&self, d: Duration) -> Duration {
        let g = self.timer_granularity.0;
        if d.0 == 0 || g == 0 {
            d
        } else {
            Duration(d.0.div_ceil(g) * g)
        }
    }

    pub fn is_instant(&self) -> bool {
        *self == DeviceModel::default()
    }
}

/// One item of application work for a host's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// The receiving application's next `recv()` + storage write for a flow.
    Recv(u32),
    /// The sending application's next storage read + `send()` for a flow.
    Send(u32),
}

/// A host's CPU. Received packets are processed at interrupt level, first come first served,
/// and preempt the applications; application work items (one `send()` or `recv()` with its
/// storage operation) run one at a time in arrival order and are stretched by the packet
/// processing that interrupts them. So a slow application lets its socket buffer fill while
/// the stack keeps acknowledging — the slow receiver of paper 000, whose window collapses.
#[derive(Clone, Debug, Default)]
pub struct Cpu {
    packets_free_at: Time,
    queue: std::collections::VecDeque<Work>,
    current: Option<Work>,
    current_done_at: Time,
    /// Bumped whenever the end of the item in service moves; stale completions are ignored.
    pub generation: u32,
    busy: Duration,
}

impl Cpu {
    /// A packet arriving at `now` needing `cost`: when it has been processed, and whether the
    /// application item in service now ends later (at [`Cpu::current_done_at`]).
    pub fn packet(&mut self, now: Time, cost: Duration) -> (Time, bool) {
        let start = self.packets_free_at.max(now);
        self.packets_free_at = start + cost;
        self.busy = self.busy + cost;
        let stretched = self.current.is_some() && self.current_done_at > start;
        if stretched {
            self.current_done_at += cost;
            self.generation = self.generation.wrapping_add(1);
        }
        (self.packets_free_at, stretched)
    }

    /// Queues application work; true if none is in service and the caller must start it.
    pub fn push(&mut self, work: Work) -> bool {
        self.queue.push_back(work);
        self.current.is_none()
    }

    /// Takes the next application item into service; none while one is in service.
    pub fn start_next(&mut self) -> Option<Work> {
        if self.current.is_some() {
            return None;
        }
        self.current = self.queue.pop_front();
        self.current
    }

    /// The item in service needs `work` of CPU from `now` on, after the packets already
    /// waiting; returns when it ends (unless packets stretch it).
    pub fn run_current(&mut self, now: Time, work: Duration) -> Time {
        self.busy = self.busy + work;
        self.current_done_at = self.packets_free_at.max(now) + work;
        self.generation = self.generation.wrapping_add(1);
        self.current_done_at
    }

    pub fn current_done_at(&self) -> Time {
        self.current_done_at
    }

    /// Ends the item in service.
    pub fn finish(&mut self) -> Option<Work> {
        self.current.take()
    }

    pub fn busy(&self) -> Duration {
        self.busy
    }
}

/// The sending application of a host-driven file transfer.
#[derive(Clone, Debug)]
pub struct FileSender {
    pub total: u64,
    pub message: u64,
    pub app_buffer: u64,
    pub delay: Duration,
    /// Bytes read from storage and prepared so far (including the message in hand).
    prepared: u64,
    /// Bytes of the current message the socket has not yet accepted.
    pub pending: u64,
    /// True while a `send()` waits for socket buffer space.
    pub blocked: bool,
}

impl FileSender {
    pub fn new(total: u64, message: u64, app_buffer: u64, delay: Duration) -> Self {
        FileSender { total, message, app_buffer, delay, prepared: 0, pending: 0, blocked: false }
    }

    /// Takes the next message off the file: its size, or `None` when the file is all sent.
    pub fn next_message(&mut self) -> Option<u64> {
        let n = self.message.min(self.total - self.prepared);
        if n == 0 {
            return None;
        }
        self.prepared += n;
        self.pending = n;
        Some(n)
    }

}

/// The receiving application of a host-driven file transfer.
#[derive(Clone, Debug)]
pub struct FileReceiver {
    pub app_buffer: u64,
    pub delay: Duration,
    /// Bytes written to storage (the file's size so far).
    pub written: u64,
    /// True while blocked in `recv()` with nothing to read.
    pub waiting: bool,
    /// True while the file's last bytes are being written to storage.
    pub storing_last: bool,
}

impl FileReceiver {
    pub fn new(app_buffer: u64, delay: Duration) -> Self {
        FileReceiver { app_buffer, delay, written: 0, waiting: true, storing_last: false }
    }
}

/// A scenario device's model: its preset's parameters with the table's overrides.
pub fn device_model(d: &Device) -> DeviceModel {
    let base = match d.preset {
        None => DeviceModel::default(),
        Some(DevicePreset::PdaIpaq3660) => DeviceModel {
            packet_cost: Duration::from_micros(1200),
            call_cost: Duration::from_micros(300),
            copy_rate: Some(BitRate(2_900_000)),
            storage: Some(StorageModel {
                read_rate: Some(BitRate(2_700_000)),
                write_rate: Some(BitRate(1_350_000)),
                op_cost: Duration::from_millis(1),
                write_growth_per_mib: 0.07,
            }),
            timer_granularity: Duration::from_millis(1),
        },
        Some(DevicePreset::PcWindows2000) => DeviceModel {
            packet_cost: Duration::from_micros(10),
            call_cost: Duration::from_micros(5),
            copy_rate: Some(BitRate(2_000_000_000)),
            storage: Some(StorageModel {
                read_rate: Some(BitRate(400_000_000)),
                write_rate: Some(BitRate(400_000_000)),
                op_cost: Duration::from_micros(20),
                write_growth_per_mib: 0.0,
            }),
            timer_granularity: Duration::from_millis(10),
        },
    };
    let given = d.storage_read_rate.is_some()
        || d.storage_write_rate.is_some()
        || d.storage_op_cost.is_some()
        || d.storage_write_growth.is_some();
    let storage = (base.storage.is_some() || given).then(|| {
        let s = base.storage.unwrap_or_default();
        StorageModel {
            read_rate: d.storage_read_rate.or(s.read_rate),
            write_rate: d.storage_write_rate.or(s.write_rate),
            op_cost: d.storage_op_cost.unwrap_or(s.op_cost),
            write_growth_per_mib: d.storage_write_growth.unwrap_or(s.write_growth_per_mib),
        }
    });
    DeviceModel {
        packet_cost: d.packet_cost.unwrap_or(base.packet_cost),
        call_cost: d.call_cost.unwrap_or(base.call_cost),
        copy_rate: d.copy_rate.or(base.copy_rate),
        storage,
        timer_granularity: d.timer_granularity.unwrap_or(base.timer_granularity),
    }
}


/// The device model of node `name` in `s` (the instant host if it has none).
pub fn device_of(s: &Scenario, name: &str) -> DeviceModel {
    s.nodes.iter().find(|n| n.name == name).and_then(|n| n.device.as_ref()).map(device_model).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flash() -> StorageModel {
        StorageModel {
            read_rate: Some(BitRate(8_000_000)),
            write_rate: Some(BitRate(4_000_000)),
            op_cost: Duration::from_micros(100),
            write_growth_per_mib: 0.5,
        }
    }

    #[test]
    fn storage_costs_by_hand() {
        let s = flash();
        // 8192 B at 8 Mb/s = 8.192 ms, in two 4096-B operations: + 0.2 ms.
        assert_eq!(s.read_time(8192, 4096), Duration::from_micros(8392));
        // Writing 1 MiB at the start of a file: base 1 048 576·8/4e6 = 2.097152 s, growth at the
        // midpoint 0.5 MiB: × (1 + 0.5·0.5) = 2.62144 s, plus 256 operations of 0.1 ms.
        assert_eq!(s.write_time(0, 1 << 20, 4096), Duration(2_621_440_000 + 25_600_000));
        // The same MiB after 3 MiB already written: midpoint 3.5 MiB → × 2.75.
        assert_eq!(s.write_time(3 << 20, 1 << 20, 1 << 20), Duration(5_767_168_000 + 100_000));
    }

    #[test]
    fn device_costs_add_call_copy_and_storage() {
        let d = DeviceModel {
            packet_cost: Duration::from_millis(1),
            call_cost: Duration::from_micros(300),
            copy_rate: Some(BitRate(32_000_000)),
            storage: Some(flash()),
            timer_granularity: Duration::from_millis(10),
        };
        // send 4096 B: 0.3 ms call + 1.024 ms copy + (0.1 ms op + 4.096 ms read).
        assert_eq!(d.send_cost(4096, 8192), Duration(300_000 + 1_024_000 + 100_000 + 4_096_000));
        // Sleep(1) on a 10 ms tick lasts 10 ms; Sleep(10) 10 ms; Sleep(11) 20 ms; no sleep is none.
        assert_eq!(d.sleep(Duration::from_millis(1)), Duration::from_millis(10));
        assert_eq!(d.sleep(Duration::from_millis(10)), Duration::from_millis(10));
        assert_eq!(d.sleep(Duration::from_millis(11)), Duration::from_millis(20));
        assert_eq!(d.sleep(Duration::ZERO), Duration::ZERO);
        assert!(DeviceModel::default().is_instant() && !d.is_instant());
    }

    #[test]
    fn packets_preempt_application_work() {
        let ms = Duration::from_millis;
        let mut c = Cpu::default();
        assert!(c.push(Work::Recv(0)), "an idle CPU must be started by the caller");
        assert_eq!(c.start_next(), Some(Work::Recv(0)));
        assert_eq!(c.start_next(), None, "one application item at a time");
        // A 10 ms recv + flash write from t = 0 ...
        assert_eq!(c.run_current(Time(0), ms(10)), Time(10_000_000));
        // ... interrupted by packets at 2 ms and 2.5 ms (1 ms each): they are processed by
        // 3 ms and 4 ms, and the write ends 2 ms later, at 12 ms.
        assert_eq!(c.packet(Time(2_000_000), ms(1)), (Time(3_000_000), true));
        assert_eq!(c.packet(Time(2_500_000), ms(1)), (Time(4_000_000), true));
        assert_eq!(c.current_done_at(), Time(12_000_000));
        // A packet after the write has ended leaves it alone.
        assert_eq!(c.finish(), Some(Work::Recv(0)));
        assert_eq!(c.packet(Time(13_000_000), ms(1)), (Time(14_000_000), false));
        // Application work queued behind packets starts when they are done.
        c.push(Work::Send(1));
        c.start_next();
        assert_eq!(c.run_current(Time(13_500_000), ms(2)), Time(16_000_000));
        assert_eq!(c.busy(), ms(15));
    }

    #[test]
    fn sender_cuts_the_file_into_messages() {
        let mut s = FileSender::new(10_000, 4096, 8192, Duration::ZERO);
        let sizes: Vec<u64> = std::iter::from_fn(|| s.next_message()).collect();
        assert_eq!(sizes, vec![4096, 4096, 1808]);
        assert_eq!(s.next_message(), None, "the whole file was handed out");
    }
}
