//! Flows and their applications: starting and stopping, the traffic schedules' sends (UDP) and
//! writes (TCP), the receiver's reads, and the TCP endpoints' input, timers and output.

use super::*;

impl Simulation {
    pub(super) fn on_flow_start(&mut self, flow: u32) {
        let fi = flow as usize;
        let now = self.now;
        let start = self.flows[fi].period.start;
        match &mut self.flows[fi].kind {
            FlowKind::Udp(src) => {
                self.events.schedule(start + src.due().at, Event::AppSend { flow });
            }
            FlowKind::Tcp(t) => {
                let mut out = std::mem::take(&mut self.scratch);
                t.client.connect(now, &mut out);
                let first_message = t.messages.as_ref().map(|m| start + m.due().at);
                let read_paced = t.paced_reads.is_some();
                let file_loop = t.file.is_some();
                self.emit_segments(fi, End::Client, &mut out);
                self.scratch = out;
                self.arm_tcp_timer(fi, End::Client);
                if let Some(first) = first_message {
                    self.events.schedule(first, Event::AppSend { flow });
                }
                if read_paced {
                    self.events.schedule(now, Event::AppRead { flow });
                }
                if file_loop {
                    let src = self.flows[fi].ends.src;
                    self.cpu_push(src, Work::Send(flow));
                }
            }
        }
    }

    pub(super) fn on_flow_stop(&mut self, flow: u32) {
        let fi = flow as usize;
        if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
            t.transfer.stop();
            self.pump_writer(fi);
        }
        // UDP sources check the stop time before each send.
    }

    pub(super) fn on_app_send(&mut self, flow: u32) {
        let fi = flow as usize;
        let now = self.now;
        if now >= self.flows[fi].period.stop {
            return;
        }
        if let FlowKind::Tcp(t) = &self.flows[fi].kind {
            if t.file.is_some() {
                // The sender's inter-packet sleep is over: its next send() queues for the CPU.
                let src = self.flows[fi].ends.src;
                self.cpu_push(src, Work::Send(flow));
                return;
            }
        }
        let start = self.flows[fi].period.start;
        match &mut self.flows[fi].kind {
            FlowKind::Udp(src) => {
                let message = src.pop();
                let max = src.max_packet();
                let next = start + src.due().at;
                // A message longer than a packet (a video frame) leaves as back-to-back packets.
                for size in fragments(message.bytes, max) {
                    self.send_udp(fi, size);
                }
                if next < self.flows[fi].period.stop {
                    self.events.schedule(next, Event::AppSend { flow });
                }
            }
            FlowKind::Tcp(t) => {
                // A message source over TCP (CBR): each message joins the socket's backlog.
                if let Some(m) = t.messages.as_mut() {
                    t.transfer.queue(m.pop().bytes as u64);
                    let next = start + m.due().at;
                    self.pump_writer(fi);
                    if next < self.flows[fi].period.stop {
                        self.events.schedule(next, Event::AppSend { flow });
                    }
                }
            }
        }
    }

    pub(super) fn send_udp(&mut self, fi: usize, size: u32) {
        let f = &mut self.flows[fi];
        let seq = f.meters.number(0);
        let FlowEnds { src, dst, sport, dport, dscp } = f.ends;
        let p = Packet {
            uid: self.next_uid,
            flow: fi as u32,
            pkt_seq: seq,
            src,
            dst,
            sport,
            dport,
            dscp,
            ecn: ecn::NOT_ECT,
            proto: Protocol::Udp,
            tcp: TcpHeader::default(),
            payload_len: size,
            sent_at: self.now,
        };
        self.next_uid += 1;
        f.meters.forward.on_sent(self.now, p.wire_len());
        self.send_from(src, p);
    }

    /// The receiver of echo flow `fi` sends request `p` straight back: the same size, number
    /// and DSCP, stamped with the request's send time so that its arrival gives the round trip.
    pub(super) fn send_echo(&mut self, fi: usize, p: Packet) {
        let FlowEnds { src, dst, sport, dport, .. } = self.flows[fi].ends;
        let echo = Packet { uid: self.next_uid, src: dst, dst: src, sport: dport, dport: sport, ..p };
        self.next_uid += 1;
        self.flows[fi].meters.reverse.on_sent(self.now, echo.wire_len());
        self.send_from(dst, echo);
    }

    /// Lets the sending application write what it wants and the socket accepts.
    pub(super) fn pump_writer(&mut self, fi: usize) {
        if matches!(&self.flows[fi].kind, FlowKind::Tcp(t) if t.file.is_some()) {
            self.file_send_unblock(fi);
            return;
        }
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
            let wants = t.transfer.wants();
            if wants > 0 {
                let n = t.client.write(now, wants, &mut out);
                t.transfer.wrote(n);
            }
            if t.transfer.finished() {
                t.client.close(now, &mut out);
            }
        }
        self.emit_segments(fi, End::Client, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, End::Client);
    }

    pub(super) fn on_app_read(&mut self, flow: u32) {
        let fi = flow as usize;
        let now = self.now;
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        if t.file.is_some() {
            // The receiver's inter-packet sleep is over: its next recv() queues for the CPU.
            let dst = self.flows[fi].ends.dst;
            self.cpu_push(dst, Work::Recv(flow));
            return;
        }
        let Some(PacedReads { rate, size: Bytes(size) }) = t.paced_reads else { return };
        let _ = self.read_server(fi, size);
        let done = matches!(&self.flows[fi].kind, FlowKind::Tcp(t) if t.server_closed);
        if !done && now < self.end {
            self.events.schedule(now + rate.tx_time(size), Event::AppRead { flow });
        }
    }

    /// The receiving application reads up to `max` bytes; closes its side once the peer's FIN
    /// has arrived and everything is read.
    pub(super) fn read_server(&mut self, fi: usize, max: u64) -> u64 {
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        let f = &mut self.flows[fi];
        let mut read = 0;
        if let FlowKind::Tcp(t) = &mut f.kind {
            let n = t.server.read(now, max, &mut out);
            read = n;
            if n > 0 {
                t.read_total += n;
                f.meters.forward.on_delivered(now, n);
                if t.completed_at.is_none() && t.transfer.target().is_some_and(|tot| t.read_total >= tot) {
                    t.completed_at = Some(now);
                }
            }
            if t.server.fin_received() && t.server.readable() == 0 && !t.server_closed {
                t.server_closed = true;
                t.server.close(now, &mut out);
            }
        }
        self.emit_segments(fi, End::Server, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, End::Server);
        read
    }

    pub(super) fn tcp_input(&mut self, fi: usize, end: End, seg: &Segment) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        let unpaced_reader = {
            let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { unreachable!("TCP packet on a UDP flow") };
            match end {
                End::Client => t.client.on_segment(now, seg, &mut out),
                End::Server => t.server.on_segment(now, seg, &mut out),
            }
            t.paced_reads.is_none() && t.file.is_none()
        };
        self.emit_segments(fi, end, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, end);
        match end {
            End::Client => self.pump_writer(fi),
            End::Server if unpaced_reader => {
                let _ = self.read_server(fi, u64::MAX);
            }
            End::Server => self.file_recv_wake(fi),
        }
    }

    pub(super) fn on_tcp_timer(&mut self, flow: u32, end: End) {
        let fi = flow as usize;
        let now = self.now;
        let mut out = std::mem::take(&mut self.scratch);
        if let FlowKind::Tcp(t) = &mut self.flows[fi].kind {
            let slot = end as usize;
            if t.timer_at[slot] == Some(now) {
                t.timer_at[slot] = None;
            }
            match end {
                End::Client => t.client.on_timer(now, &mut out),
                End::Server => t.server.on_timer(now, &mut out),
            }
        }
        self.emit_segments(fi, end, &mut out);
        self.scratch = out;
        self.arm_tcp_timer(fi, end);
    }

    /// Schedules a timer event if the socket's deadline is earlier than the one pending. Later
    /// deadlines need no new event: the pending one fires, finds nothing due, and re-arms.
    pub(super) fn arm_tcp_timer(&mut self, fi: usize, end: End) {
        let FlowKind::Tcp(t) = &mut self.flows[fi].kind else { return };
        let deadline = match end {
            End::Client => t.client.poll_deadline(),
            End::Server => t.server.poll_deadline(),
        };
        let slot = end as usize;
        if let Some(d) = deadline {
            if t.timer_at[slot].is_none_or(|pending| d < pending) {
                t.timer_at[slot] = Some(d);
                self.events.schedule(d.max(self.now), Event::TcpTimer { flow: fi as u32, end });
            }
        }
    }

    pub(super) fn emit_segments(&mut self, fi: usize, end: End, out: &mut Vec<Segment>) {
        for seg in out.drain(..) {
            let f = &mut self.flows[fi];
            let (src, dst, sport, dport) = f.ends.sent_by(end);
            let dir = end as usize;
            let seq = f.meters.number(dir);
            let p = Packet {
                uid: self.next_uid,
                flow: fi as u32,
                pkt_seq: seq,
                src,
                dst,
                sport,
                dport,
                dscp: f.ends.dscp,
                ecn: seg.ecn,
                proto: Protocol::Tcp,
                tcp: seg.hdr,
                payload_len: seg.payload_len,
                sent_at: self.now,
            };
            self.next_uid += 1;
            f.meters.direction(dir).on_sent(self.now, p.wire_len());
            self.send_from(src, p);
        }
    }
}

