//! CORD's directory (Algorithm 2): one handler per message, and the
//! recycling of Releases and notification requests that cannot commit yet.

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Num, Write, ACK, DATA, NOTI};
use super::protocol::{Cord, GStore, Ghost};
use super::tables::EpochTable;
use super::{Mutant, Variant};
use crate::agents::protocol::{AgentId, Ctx, Violation};
use crate::programs::Value;

/// A directory slice with its LLC slice (Debug: `text.rs`).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Dir {
    /// Values by location (checking; empty when timed: no data is kept).
    pub mem: Vec<Value>,
    /// Relaxed stores committed, per (core, epoch).
    pub cnt: EpochTable,
    /// Notifications received, per (core, epoch).
    pub noti: EpochTable,
    /// Per core (sorted): the largest committed epoch.
    pub largest: SmallVec<[(AgentId, Num); 2]>,
    /// Releases and notification requests waiting to commit, oldest first
    /// (the recycled messages, held in the directory's buffer).
    pub held: SmallVec<[(AgentId, Msg); 2]>,
    pub stats: DirStats,
}

/// High-water marks and counts of a timed run (zero when checking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DirStats {
    pub cnt_high: u32,
    pub noti_high: u32,
    pub held_high: u32,
    pub recycles: u64,
}

impl Dir {
    fn largest(&self, pid: AgentId) -> Option<Num> {
        self.largest.iter().find(|e| e.0 == pid).map(|e| e.1)
    }

    fn set_largest(&mut self, pid: AgentId, ep: Num) {
        match self.largest.iter_mut().find(|e| e.0 == pid) {
            Some(e) => e.1 = ep,
            None => {
                let i = self.largest.partition_point(|e| e.0 < pid);
                self.largest.insert(i, (pid, ep));
            }
        }
    }

    fn write(&mut self, loc: Loc, val: Value) {
        if let Some(m) = self.mem.get_mut(loc as usize) {
            *m = val;
        }
    }
}

impl Cord {
    pub(super) fn dir_message(
        &self,
        d: &mut Dir,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<(), Violation> {
        // only the messages of the core this one concerns can change state
        let pid = match msg {
            Msg::Noti { pid, .. } => pid,
            _ => from,
        };
        match msg {
            Msg::RlxST { w, ep, acked, op } => {
                d.write(w.loc, w.val);
                self.ghost_commit(ctx, from, GStore::Rlx { dir: self.dir_index(ctx.me), loc: w.loc })?;
                if self.variant == Variant::Cord {
                    d.cnt
                        .bump(from, ep, self.params.counts(), self.params.dir_counters)
                        .map_err(|_| self.overflow("store counter", from, ep))?;
                }
                if acked {
                    ctx.send(from, ACK, Msg::Ack { op });
                }
            }
            Msg::RelST { .. } | Msg::ReqNoti { .. } => {
                if self.variant != Variant::Cord {
                    // SO: the core waited for every earlier ack; commit at once
                    let Msg::RelST { w, ep, .. } = msg else { return Err(Violation::unexpected("so", msg)) };
                    self.commit_release(d, ctx, from, w, ep)?;
                    return Ok(());
                }
                d.held.push((from, msg));
            }
            Msg::Noti { pid, ep } => {
                d.noti
                    .bump(pid, ep, u64::from(u8::MAX) + 1, self.params.dir_notis)
                    .map_err(|_| self.overflow("notification counter", pid, ep))?;
            }
            Msg::Rd { loc, op } => {
                let val = d.mem.get(loc as usize).copied().unwrap_or(0);
                ctx.send(from, DATA, Msg::RdData { loc, val, op });
            }
            Msg::Ack { .. } | Msg::RelAck { .. } | Msg::RdData { .. } => {
                return Err(Violation::unexpected("directory", msg));
            }
        }
        self.recycle(d, ctx, pid)?;
        if self.driven {
            let s = &mut d.stats;
            s.cnt_high = s.cnt_high.max(d.cnt.len() as u32);
            s.noti_high = s.noti_high.max(d.noti.len() as u32);
            s.held_high = s.held_high.max(d.held.len() as u32);
        }
        Ok(())
    }

    /// Retry core `pid`'s held messages until none commits (the paper's
    /// recycled Releases; the `NoRecycle` mutant retries only the oldest
    /// held message, whoever sent it).
    fn recycle(&self, d: &mut Dir, ctx: &mut Ctx<Msg, Ghost>, pid: AgentId) -> Result<(), Violation> {
        loop {
            let mut progress = false;
            let mut i = 0;
            while i < d.held.len() {
                let (from, msg) = d.held[i];
                if from != pid && !self.is(Mutant::NoRecycle) {
                    i += 1;
                    continue;
                }
                if self.try_commit(d, ctx, from, msg)? {
                    d.held.remove(i);
                    progress = true;
                } else {
                    if self.driven {
                        d.stats.recycles += 1;
                    }
                    if self.is(Mutant::NoRecycle) {
                        break;
                    }
                    i += 1;
                }
            }
            if !progress {
                return Ok(());
            }
        }
    }

    /// Whether `prev`, the core's last unacked Release here, committed
    /// (Releases commit here in order, so the largest committed epoch is
    /// it or a later one).
    fn committed(&self, d: &Dir, pid: AgentId, prev: Option<Num>) -> bool {
        match (prev, d.largest(pid)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(p), Some(l)) => p == l,
        }
    }

    fn try_commit(&self, d: &mut Dir, ctx: &mut Ctx<Msg, Ghost>, from: AgentId, msg: Msg) -> Result<bool, Violation> {
        let counted = |d: &Dir, ep: Num, cnt: Num| self.is(Mutant::NoCounterCheck) || d.cnt.get(from, ep) == cnt;
        match msg {
            Msg::RelST { w, ep, cnt, prev, noti } => {
                if !(counted(d, ep, cnt) && self.committed(d, from, prev) && d.noti.get(from, ep) == noti as Num) {
                    return Ok(false);
                }
                self.commit_release(d, ctx, from, w, ep)?;
                Ok(true)
            }
            Msg::ReqNoti { ep, cnt, prev, dst } => {
                if !(counted(d, ep, cnt) && self.committed(d, from, prev)) {
                    return Ok(false);
                }
                d.cnt.free(from, ep);
                ctx.send(self.dir_agent(dst), NOTI, Msg::Noti { pid: from, ep });
                Ok(true)
            }
            _ => unreachable!("only Releases and notification requests are held"),
        }
    }

    fn commit_release(
        &self,
        d: &mut Dir,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        w: Option<Write>,
        ep: Num,
    ) -> Result<(), Violation> {
        if let Some(w) = w {
            d.write(w.loc, w.val);
        }
        self.ghost_commit(ctx, from, GStore::Rel { dir: self.dir_index(ctx.me), ep })?;
        d.cnt.free(from, ep);
        d.noti.free(from, ep);
        d.set_largest(from, ep);
        ctx.send(from, ACK, Msg::RelAck { ep });
        Ok(())
    }

    fn overflow(&self, table: &str, pid: AgentId, ep: Num) -> Violation {
        Violation {
            kind: "table overflow",
            detail: format!(
                "core {pid}'s epoch {ep} needs a {table} entry at a directory whose {} entries for it are in use",
                if table == "store counter" { self.params.dir_counters } else { self.params.dir_notis }
            ),
        }
    }
}
