//! A program core's store buffer (timing only; `[protocol.bi.tree]
//! store_buffer`): the out-of-order core's way of not waiting for its
//! stores, as Skylake-SP's store buffer does. Its size is the core front
//! end's (`front.rs`, the `skylake-sp` preset's 56 entries): an entry is
//! held there from the store's dispatch until it performs here, and a full
//! buffer stalls the core's dispatch.
//!
//! A store, and a clwb or clflushopt behind a store, *retires* into the
//! buffer and the core goes on. The buffer performs its entries in program
//! order (TSO: no other core sees a younger store before an older one, and
//! a flush is ordered after the older stores to its line): a store when its
//! line is held E or M, a flush when it may issue (`may_flush`). Ownership
//! is fetched ahead: every buffered store whose line is not writable sends
//! its `GetM` at once, each holding one of the core's fill buffers (shared
//! with its loads and flushes, `Bi::fill_free`), so the misses of a burst
//! of stores overlap (Skylake's RFO prefetch). An owned line can be
//! taken back (an `Inv`) before its store performs; the store then asks
//! again.
//!
//! A load of a word with a buffered store takes the youngest one's value
//! (store-to-load forwarding); a load of another word of a line with a
//! buffered store reads the core's copy, or waits for the stores to perform
//! if the core does not hold the line. mfence and the exchange (a locked
//! instruction) wait until the buffer is empty.
//!
//! The buffer is the one store buffer of every protocol's cores
//! (`agents/core/store_buffer.rs`); BI's own parts are its entries (a
//! flush among the stores: the shared buffer has stores, releases and
//! fences, and a flush is ordered as a fence there) and the ownership
//! prefetch around it (`rfo`). The core's front end (`front.rs`) holds
//! each entry's slot of its store buffer until this buffer performs it
//! ([`super::front::Front::performed`]): the front end bounds the entries,
//! this buffer performs them. A store performs only when no load the core
//! went past is in flight (TSO: a store never passes an older load).

use super::lines::Lines;
use super::protocol::{Bi, Core, Ghost, Line, Msg, PLine, Val, Wait, P, REQ};
use super::runtime::Word;
use super::FlushOp;
use crate::agents::core::store_buffer::{Buffered, Class, StoreBuffer};
use crate::agents::protocol::Ctx;

/// The preset's L1 fill buffers ([`super::CORE`]): the inline size of a
/// program core's arrays of misses in flight (`rfo`, the front end's);
/// the bound is the machine's `fill_buffers` (`Bi::fill_free`).
pub const FILL_BUFFERS: usize = super::CORE.core.fill_buffers as usize;

/// A retired store or flush, not yet performed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entry {
    Store { line: Line, word: u8, val: Word },
    Flush { line: Line, op: FlushOp },
}

/// A load forwards from a store of its word (`StoreBuffer::forward`).
impl Buffered for Entry {
    type Loc = (Line, u8);
    type Value = Word;
    fn store(&self) -> Option<((Line, u8), Word)> {
        match *self {
            Entry::Store { line, word, val } => Some(((line, word), val)),
            Entry::Flush { .. } => None,
        }
    }
    /// A flush is ordered after the older stores to its line; the buffer
    /// drains in order (TSO) anyway, so it is simply a fence in it.
    fn class(&self) -> Class {
        match self {
            Entry::Store { .. } => Class::Store,
            Entry::Flush { .. } => Class::Fence,
        }
    }
}

/// Whether a store to `line` waits in the buffer.
pub fn holds_store(sb: &StoreBuffer<Entry>, line: Line) -> bool {
    sb.iter().any(|e| matches!(*e, Entry::Store { line: l, .. } if l == line))
}

impl Bi {
    /// Whether program cores retire their stores into a store buffer
    /// (false: an in-order core's stores wait for their lines).
    pub(super) fn buffered(&self) -> bool {
        self.program.as_ref().is_some_and(|p| p.buffered)
    }

    /// Retire `e` into core `c`'s buffer and perform what can be.
    pub(super) fn sb_push(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, e: Entry) {
        c.prog.as_mut().expect("a program core").sb.push(e);
        self.sb_drain(c, ctx);
    }

    /// An ownership request of the buffer was granted: hold the line E
    /// (the store makes it M when it performs), then drain.
    pub(super) fn sb_granted(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, line: Line, val: Val) {
        let rfo = &mut c.prog.as_mut().expect("a program core").rfo;
        let i = rfo.iter().position(|&l| l == line).expect("a request in flight");
        rfo.swap_remove(i);
        self.install(c, ctx, line, PLine { st: P::E, val });
        self.sb_drain(c, ctx);
    }

    /// Whether a `Data` for `line` answers the buffer's request.
    pub(super) fn sb_awaits(c: &Core, line: Line) -> bool {
        c.prog.as_ref().is_some_and(|p| p.rfo.contains(&line))
    }

    /// Perform the buffer's entries from its head while they may go, then
    /// fetch ownership for the stores behind.
    pub(super) fn sb_drain(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>) {
        while let Some(&head) = c.prog.as_ref().and_then(|p| p.sb.head()) {
            let performed = match head {
                Entry::Store { line, word, val } => self.sb_store(c, ctx, line, word, val),
                Entry::Flush { line, op } => {
                    let go = self.may_flush(c, line, op);
                    if go {
                        self.flush(c, ctx, line, op);
                    }
                    go
                }
            };
            if !performed {
                break;
            }
            let p = c.prog.as_mut().expect("a program core");
            p.sb.pop();
            // its entry in the front end's store buffer frees
            p.front.0.performed(ctx.now);
        }
        self.sb_prefetch(c, ctx);
    }

    /// The store at the buffer's head performs if its line is writable.
    fn sb_store(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>, line: Line, word: u8, val: Word) -> bool {
        let writable = writable(&c.l2, line);
        // TSO: no store performs before an older load; a load the core went
        // past (`front.rs`) may be older, so none may be in flight
        if !writable || c.flushing.iter().any(|f| f.0 == line) || !c.loads.is_empty() {
            return false;
        }
        let old = c.l2.get(line).expect("held").val;
        let versions = &mut ctx.ghost.world.as_mut().expect("a program's world").versions;
        let new = versions.store(old, word, val);
        let pl = c.l2.get_mut(line).expect("held");
        pl.st = P::M;
        pl.val = new;
        self.wrote(ctx, line, new);
        c.l2.touch(line);
        true
    }

    /// Send `GetM` for the buffered stores whose lines are not writable,
    /// oldest first, while fill buffers are free (`Bi::fill_free`).
    fn sb_prefetch(&self, c: &mut Core, ctx: &mut Ctx<Msg, Ghost>) {
        let llc = self.llc_agent(self.domain_of(ctx.me));
        let mut free = usize::from(self.params.fill_buffers).saturating_sub(Self::misses_in_flight(c));
        let Some(p) = c.prog.as_mut() else { return };
        for e in p.sb.iter() {
            if free == 0 {
                break;
            }
            let Entry::Store { line, .. } = *e else { continue };
            let writable = writable(&c.l2, line);
            // a line with a flush, a load or a write-back of it in flight asks when that is over
            let busy = c.flushing.iter().any(|f| f.0 == line)
                || c.loads.iter().any(|l| l.0 == line)
                || c.wb.iter().any(|w| w.0 == line)
                || matches!(c.wait, Wait::Miss { line: l, .. } if l == line);
            if writable || busy || p.rfo.contains(&line) {
                continue;
            }
            p.rfo.push(line);
            free -= 1;
            ctx.send(llc, REQ, Msg::GetM { line });
        }
    }
}

/// Whether a core's private copies `l2` hold `line` E or M (a store to it performs at once).
fn writable(l2: &Lines<PLine>, line: Line) -> bool {
    matches!(l2.get(line), Some(pl) if pl.st != P::S)
}
