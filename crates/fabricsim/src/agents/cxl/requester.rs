//! A requester (ESF: host or accelerator): a request queue fed by its
//! workload, closed loop (a window of outstanding requests) or open loop
//! (issues at a rate), or replaying a trace.

use super::messages::{MemMsg, MsgKind};
use crate::engine::rng::Stream;
use crate::engine::Time;
use crate::workloads::kinds::{Arrival, Injection};
use crate::workloads::pattern::{interleave, Generator};
use crate::workloads::{Access, WorkloadSpec};

pub struct Requester {
    pub index: u32,
    pub issue_latency: Time,
    pub cache_latency: Time,
    pub workload: WorkloadSpec,
    rng: Stream,
    gen: Generator,
    /// Requests created so far (the next tag).
    pub issued: u64,
    pub completed: u64,
    pub outstanding: u32,
    /// Open loop: time of the next issue.
    pub next_issue: Time,
}

impl Requester {
    pub fn new(
        index: u32,
        count: u32,
        issue_latency: Time,
        cache_latency: Time,
        workload: WorkloadSpec,
        seed: u64,
        perm: &[u32],
    ) -> Self {
        let gen = Generator::new(&workload, index, count, perm);
        Self {
            index,
            issue_latency,
            cache_latency,
            rng: Stream::new(seed, index as u64),
            gen,
            workload,
            issued: 0,
            completed: 0,
            outstanding: 0,
            next_issue: 0,
        }
    }

    pub fn total(&self) -> u64 {
        self.workload.total()
    }

    pub fn done(&self) -> bool {
        self.completed == self.total()
    }

    /// Whether a new request may be created now (closed loop: window).
    pub fn can_issue(&self) -> bool {
        self.issued < self.total()
            && match self.workload.injection {
                Injection::Closed => self.outstanding < self.workload.window,
                Injection::Open => true,
            }
    }

    /// Is request `tag` measured (past warm-up)?
    pub fn measured(&self, tag: u64) -> bool {
        tag >= self.workload.warmup
    }

    /// Create the next request: its message and the memory (position in the
    /// workload's target list) that serves it.
    pub fn create(&mut self, now: Time) -> (MemMsg, u32) {
        let (a, t) = match &self.workload.trace {
            Some(tr) => {
                let r = tr[self.issued as usize];
                let a = Access { write: r.write, addr: r.addr, bytes: r.bytes };
                (a, interleave(r.addr, self.workload.interleave, self.workload.targets.len() as u64))
            }
            None => self.gen.next(&mut self.rng),
        };
        let msg = MemMsg {
            kind: match (a.write, self.workload.posted_writes) {
                (false, _) => MsgKind::ReadReq,
                (true, false) => MsgKind::WriteReq,
                (true, true) => MsgKind::PostedWrite,
            },
            requester: self.index,
            tag: self.issued,
            addr: a.addr,
            bytes: a.bytes,
            created: now,
            queued: 0,
            fabric_wait: 0,
        };
        self.issued += 1;
        self.outstanding += 1;
        (msg, t)
    }

    /// Open loop / trace: when the next request may be created, after one
    /// was created at `now`.
    pub fn advance_schedule(&mut self, now: Time) -> Option<Time> {
        if self.issued >= self.total() {
            return None;
        }
        if let Some(tr) = &self.workload.trace {
            return Some(tr[self.issued as usize].time.max(now));
        }
        let gap = match self.workload.arrival {
            Arrival::Periodic => self.workload.interval,
            Arrival::Poisson => self.rng.exp(self.workload.interval as f64).round() as Time,
        };
        self.next_issue = self.next_issue.max(now) + gap;
        Some(self.next_issue)
    }

    /// First issue time of an open-loop or trace workload.
    pub fn first_issue(&mut self) -> Time {
        match &self.workload.trace {
            Some(tr) => tr[0].time,
            None if self.workload.injection == Injection::Open => {
                let gap = match self.workload.arrival {
                    Arrival::Periodic => 0,
                    Arrival::Poisson => self.rng.exp(self.workload.interval as f64).round() as Time,
                };
                self.next_issue = gap;
                gap
            }
            None => 0,
        }
    }

    /// A response arrived; returns whether it was outstanding.
    pub fn complete(&mut self) {
        self.outstanding -= 1;
        self.completed += 1;
    }
}
