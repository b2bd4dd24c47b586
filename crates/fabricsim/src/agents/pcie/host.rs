//! The host behind the root complex: host cores with private MESI caches
//! and the home (a blocking MESI directory, the host's L2 and its DRAM),
//! all run by `coherence::directory`'s handlers (see `mod.rs`).

use std::hash::{Hash, Hasher};

use super::messages::{Loc, Msg};
use super::protocol::{Ghost, Node, Pcie};
use crate::agents::cache::{CacheGeometry, SetAssoc, VictimPolicy};
use crate::agents::coherence::core::Core;
use crate::agents::coherence::directory::{self, CohGhost};
use crate::agents::coherence::lines::{CacheLines, DirLines};
use crate::agents::protocol::{AgentId, Ctx, Step, Violation};

impl CohGhost for Ghost {
    #[inline]
    fn coh(&mut self) -> &mut directory::Ghost {
        &mut self.coh
    }
}

/// A host core: its program (or workload) front end and its private
/// write-back cache, as a `directory` cache.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct HostCore {
    pub core: Core,
    pub lines: CacheLines,
}

impl std::fmt::Debug for HostCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: Vec<String> =
            self.lines.held().iter().map(|(l, x)| format!("[{l}] {:?} data={}", x.st, x.data)).collect();
        write!(f, "host core pc={} regs={:?} lines: {}", self.core.pc, self.core.regs, held.join("; "))
    }
}

/// The host's L2 in a timed run: which lines are on chip. A directory
/// read of a line in it costs the home's `host_latency` alone; a miss adds
/// `memory_latency` (DRAM). Host cores' fills and every write-back (a host
/// cache's, a DMA write's) allocate; the root complex's reads do not.
/// Not kept when checking (no time there).
#[derive(Clone, Default)]
pub struct L2(pub Option<Box<SetAssoc<()>>>);

impl L2 {
    /// Table 2's L2: 256 KiB, 8 ways, with the first `cached` lines in it
    /// (a table the host wrote before the run).
    pub fn new(geometry: CacheGeometry, cached: u64) -> Self {
        let mut s = SetAssoc::new(geometry, VictimPolicy::Lru, 0);
        for l in 0..cached {
            s.insert(l, ());
        }
        L2(Some(Box::new(s)))
    }
}

/// Not part of a checked state (the checker keeps none).
impl PartialEq for L2 {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for L2 {}
impl Hash for L2 {
    fn hash<H: Hasher>(&self, _: &mut H) {}
}
impl std::fmt::Debug for L2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(s) => write!(f, "L2 of {} lines ({} on chip)", s.capacity(), s.len()),
            None => write!(f, "no L2"),
        }
    }
}

/// The home: MESI's directory lines (sharers or owner, memory) and the L2.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Home {
    pub lines: DirLines,
    pub l2: L2,
}

impl std::fmt::Debug for Home {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .lines
            .iter()
            .enumerate()
            .filter(|(_, d)| d.owner.is_some() || d.sharers != 0 || d.wait > 0 || d.mem != 0)
            .map(|(l, d)| format!("[{l}] owner={:?} sharers={:b} mem={} wait={}", d.owner, d.sharers, d.mem, d.wait))
            .collect();
        write!(f, "dir: {}", if parts.is_empty() { "all I".to_string() } else { parts.join("; ") })
    }
}

impl Pcie {
    /// A message at the home: MESI's directory handler, timed by the L2 —
    /// a line on chip is read without DRAM (`memory_latency`).
    pub(super) fn home_message(
        &self,
        h: &mut Home,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let Msg::Coh(m) = msg else { return Err(Violation::unexpected("host directory", msg)) };
        let loc = match m {
            directory::Msg::GetS { loc }
            | directory::Msg::GetM { loc }
            | directory::Msg::PutM { loc, .. }
            | directory::Msg::CopyBack { loc, .. } => Some(loc as u64),
            _ => None,
        };
        let hit = match (&h.l2.0, loc) {
            (Some(l2), Some(l)) => l2.contains(l),
            _ => false,
        };
        let step = self.coh.dir_message(&mut h.lines, ctx, from, m)?;
        if step == Step::Done {
            if let (Some(l2), Some(l)) = (h.l2.0.as_deref_mut(), loc) {
                let host = (from as usize) < self.kinds.len();
                match m {
                    directory::Msg::GetS { .. } | directory::Msg::GetM { .. } if hit => {
                        ctx.forget_memory_reads();
                        l2.touch(l);
                    }
                    // a host core's miss fills the L2; the root complex's reads do not allocate
                    directory::Msg::GetS { .. } | directory::Msg::GetM { .. } if host => {
                        l2.insert(l, ());
                    }
                    directory::Msg::PutM { .. } | directory::Msg::CopyBack { .. } => {
                        l2.insert(l, ());
                    }
                    _ => {}
                }
            }
        }
        Ok(step)
    }
}

impl Pcie {
    /// The host domain's invariants (the Primer's): at any time a line has
    /// one writer or any number of readers (single writer, multiple
    /// readers), counting host caches and the root complex — a write entry
    /// that owns its line is a writer, a read entry holding data a reader
    /// (it is covered by the root complex's sharer bit until an `Inv`
    /// squashes it); and every host cache's readable copy holds the last
    /// value written (data value).
    pub(super) fn coherence_invariant(&self, agents: &[Node], ghost: &Ghost) -> Result<(), (String, String)> {
        use super::rc::St;
        if self.mmio.is_some() {
            return Ok(());
        }
        // (location, writers, readers), sorted by location
        let mut counts: Vec<(Loc, u32, u32)> = Vec::new();
        let mut count = |l: Loc, w: bool, r: bool| match counts.iter_mut().find(|c| c.0 == l) {
            Some(c) => {
                c.1 += w as u32;
                c.2 += r as u32;
            }
            None => counts.push((l, w as u32, r as u32)),
        };
        for (c, a) in agents[..self.kinds.len()].iter().enumerate() {
            let Node::Host(h) = a else { continue };
            for (l, line) in h.lines.held() {
                let (w, r) = (line.st.writable(), line.st.readable() && !line.st.writable());
                if (w || r) && ghost.coh.last.get(l as usize).is_some_and(|&v| v != line.data) {
                    return Err((
                        "data-value invariant".into(),
                        format!(
                            "host{c} holds {} for location {l} in {:?}, but the last write wrote {}",
                            line.data, line.st, ghost.coh.last[l as usize]
                        ),
                    ));
                }
                count(l, w, r);
            }
        }
        if let Node::Rc(rc) = &agents[self.rc_agent() as usize] {
            for e in &rc.rlsq {
                match (e.wr, e.st) {
                    (Some(_), St::Owned) => count(e.loc, true, false),
                    (None, St::Data(_)) => count(e.loc, false, true),
                    _ => {}
                }
            }
        }
        counts.sort_unstable_by_key(|c| c.0);
        for (l, writers, readers) in counts {
            if writers > 1 || (writers == 1 && readers > 0) {
                return Err((
                    "single-writer-multiple-readers".into(),
                    format!("location {l} has {writers} writers and {readers} readers at once (host caches and the root complex)"),
                ));
            }
        }
        Ok(())
    }
}
