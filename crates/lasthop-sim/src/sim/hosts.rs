//! End hosts that take time (Hur & Hong, paper 000): a device's CPU serving application work
//! and received packets, and the file loop of a host-driven file transfer.

use super::*;

impl Simulation {
    /// Queues work on `node`'s CPU, starting it if the CPU was idle.
    pub(super) fn cpu_push(&mut self, node: u32, work: Work) {
        if self.hosts.cpus[node as usize].push(work) {
            self.cpu_start(node);
        }
    }

    /// Starts the next application items on `node`'s CPU until one takes time.
    pub(super) fn cpu_start(&mut self, node: u32) {
        let n = node as usize;
        while let Some(work) = self.hosts.cpus[n].start_next() {
            let d = self.work_started(node, work);
            if d.0 > 0 {
                let done = self.hosts.cpus[n].run_current(self.now, d);
                let generation = self.hosts.cpus[n].generation;
                self.events.schedule(done, Event::CpuDone { node, generation });
                return;
            }
            self.hosts.cpus[n].finish();
            self.work_done(work);
        }
    }

    pub(super) fn on_cpu_done(&mut self, node: u32, generation: u32) {
        if self.hosts.cpus[node as usize].generation != generation {
            return; // packets stretched the item; a later completion is scheduled
        }
        if let Some(work) = self.hosts.cpus[node as usize].finish() {
            self.work_done(work);
        }
        self.cpu_start(node);
    }

    /// What starting `work` does at once, and how long it occupies the CPU.
    pub(super) fn work_started(&mut self, node: u32, work: Work) -> Duration {
        let dev = self.hosts.devices[node as usize];
        match work {
            Work::Send(flow) => {
                let fi = flow as usize;
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!("file loop on a TCP flow") };
                let fl = t.file.as_mut().expect("file loop");
                match fl.sender.next_message() {
                    Some(n) => dev.send_cost(n, fl.sender.app_buffer),
                    None => Duration::ZERO,
                }
            }
            Work::Recv(flow) => {
                let fi = flow as usize;
                let (before, max) = match &self.flows[fi].kind {
                    FlowKind::Tcp(t) => (t.completed_at, t.file.as_ref().expect("file loop").receiver.app_buffer),
                    _ => unreachable!("file loop on a TCP flow"),
                };
                let n = self.read_server(fi, max);
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!() };
                let fl = t.file.as_mut().expect("file loop");
                if n == 0 {
                    fl.receiver.waiting = true;
                    return Duration::ZERO;
                }
                let d = dev.receive_cost(fl.receiver.written, n, fl.receiver.app_buffer);
                fl.receiver.written += n;
                // The transfer is complete when the last byte is stored, not when it is read.
                if before.is_none() && t.completed_at.is_some() {
                    t.completed_at = None;
                    fl.receiver.storing_last = true;
                }
                d
            }
        }
    }

    /// What finishing `work` does.
    pub(super) fn work_done(&mut self, work: Work) {
        match work {
            Work::Send(flow) => {
                let fi = flow as usize;
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!() };
                let fl = t.file.as_mut().expect("file loop");
                if fl.sender.pending == 0 {
                    // Nothing left to send: the application closes its socket.
                    let mut out = std::mem::take(&mut self.scratch);
                    t.client.close(self.now, &mut out);
                    self.emit_segments(fi, End::Client, &mut out);
                    self.scratch = out;
                    self.arm_tcp_timer(fi, End::Client);
                } else {
                    fl.sender.blocked = true;
                    self.file_send_unblock(fi);
                }
            }
            Work::Recv(flow) => {
                let fi = flow as usize;
                let (dst, dev) = (self.flows[fi].ends.dst, self.hosts.devices[self.flows[fi].ends.dst as usize]);
                let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!() };
                let fl = t.file.as_mut().expect("file loop");
                if fl.receiver.storing_last {
                    fl.receiver.storing_last = false;
                    t.completed_at = Some(self.now);
                }
                if fl.receiver.waiting {
                    return; // blocked in recv(); data or the FIN wakes it (file_recv_wake)
                }
                let sleep = dev.sleep(fl.receiver.delay);
                if sleep.0 == 0 {
                    self.cpu_push(dst, Work::Recv(flow));
                } else {
                    self.events.schedule(self.now + sleep, Event::AppRead { flow });
                }
            }
        }
    }

    /// A blocked `send()` hands the socket what fits; once the whole message is in, the
    /// application sleeps its inter-packet delay and sends the next one.
    pub(super) fn file_send_unblock(&mut self, fi: usize) {
        let now = self.now;
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        let Some(fl) = t.file.as_mut() else { return };
        if !fl.sender.blocked {
            return;
        }
        let mut out = std::mem::take(&mut self.scratch);
        let n = t.client.write(now, fl.sender.pending, &mut out);
        fl.sender.pending -= n;
        let done = fl.sender.pending == 0;
        if done {
            fl.sender.blocked = false;
        }
        let delay = fl.sender.delay;
        self.emit_segments(fi, End::Client, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, End::Client);
        if done {
            let src = self.flows[fi].ends.src;
            let sleep = self.hosts.devices[src as usize].sleep(delay);
            let flow = fi as u32;
            if sleep.0 == 0 {
                self.cpu_push(src, Work::Send(flow));
            } else {
                self.events.schedule(now + sleep, Event::AppSend { flow });
            }
        }
    }

    /// Data or a FIN reached a file receiver blocked in `recv()`: its call resumes.
    pub(super) fn file_recv_wake(&mut self, fi: usize) {
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        let Some(fl) = t.file.as_mut() else { return };
        if fl.receiver.waiting && (t.server.readable() > 0 || (t.server.fin_received() && !t.server_closed)) {
            fl.receiver.waiting = false;
            let dst = self.flows[fi].ends.dst;
            self.cpu_push(dst, Work::Recv(fi as u32));
        }
    }
}
