//! Litmus tests generated from relaxation cycles, in the manner of diy
//! (J. Alglave, L. Maranget, S. Sarkar, P. Sewell, "Fences in weak memory
//! models", CAV 2010; herdtools' `diy7`).
//!
//! A cycle is a list of [`Edge`]s between memory events, e.g. `Rfe PodRR
//! Fre PodWW` (MP): each edge goes from an event (a read `R` or a write
//! `W`) to the next, the last back to the first. External edges (`Rfe`,
//! `Fre`, `Wse`) go to another thread on the same location; `Pod` and
//! `Fenced` edges stay in the thread and go to another location (`Fenced`
//! with an `atomic_thread_fence` between the two accesses); `Pos` stays in
//! the thread and on the location. The test is the program the cycle
//! describes and the condition that every edge happened: a read reads the
//! write before it on its location along the cycle (or the initial 0), a
//! location written twice ends with its last write. Under SC no such cycle
//! exists, so the condition names an outcome SC forbids; weaker models may
//! allow it.
//!
//! [`cycles`] enumerates the cycles of a vocabulary up to a size (one per
//! rotation class), [`Cycle::to_c`] writes the test in herd's C litmus
//! format with an [`Annotation`] for the accesses' memory orders, and
//! [`Cycle::program`] parses that text with [`crate::programs::litmus`],
//! so a generated test goes through the same parser as a file.

use std::fmt;
use std::str::FromStr;

use crate::programs::litmus::{self, LitmusError};
use crate::programs::{Order, Program};

/// A read or a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    R,
    W,
}

impl Dir {
    fn letter(self) -> char {
        match self {
            Dir::R => 'R',
            Dir::W => 'W',
        }
    }
}

/// One relaxation of a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Edge {
    /// Read-from, external: a write, then a read of it on another thread.
    Rfe,
    /// From-read, external: a read, then a write on another thread that
    /// overwrites what it read.
    Fre,
    /// Write serialisation (coherence), external: a write, then a write on
    /// another thread after it in coherence order.
    Wse,
    /// Program order to another location.
    Pod(Dir, Dir),
    /// Program order on the same location.
    Pos(Dir, Dir),
    /// Program order to another location with `atomic_thread_fence(order)`
    /// between (`Fenced{sc,ar,rel,acq}XY`).
    Fenced(Order, Dir, Dir),
}

fn fence_word(o: Order) -> &'static str {
    match o {
        Order::SeqCst => "sc",
        Order::AcqRel => "ar",
        Order::Release => "rel",
        Order::Acquire => "acq",
        Order::Relaxed => "rlx",
    }
}

impl Edge {
    /// The direction of the event the edge leaves.
    pub fn src(self) -> Dir {
        match self {
            Edge::Rfe | Edge::Wse => Dir::W,
            Edge::Fre => Dir::R,
            Edge::Pod(a, _) | Edge::Pos(a, _) | Edge::Fenced(_, a, _) => a,
        }
    }

    /// The direction of the event the edge reaches.
    pub fn dst(self) -> Dir {
        match self {
            Edge::Rfe => Dir::R,
            Edge::Fre | Edge::Wse => Dir::W,
            Edge::Pod(_, b) | Edge::Pos(_, b) | Edge::Fenced(_, _, b) => b,
        }
    }

    /// Whether the edge goes to another thread.
    pub fn external(self) -> bool {
        matches!(self, Edge::Rfe | Edge::Fre | Edge::Wse)
    }

    /// Whether the edge goes to another location.
    pub fn changes_location(self) -> bool {
        matches!(self, Edge::Pod(..) | Edge::Fenced(..))
    }

    /// Every edge: the three external ones, `Pod`, `Pos` and `Fenced` with
    /// each of `fences` for the four direction pairs.
    pub fn vocabulary(fences: &[Order]) -> Vec<Edge> {
        let pairs = [(Dir::R, Dir::R), (Dir::R, Dir::W), (Dir::W, Dir::R), (Dir::W, Dir::W)];
        let mut v = vec![Edge::Rfe, Edge::Fre, Edge::Wse];
        v.extend(pairs.map(|(a, b)| Edge::Pod(a, b)));
        v.extend(pairs.map(|(a, b)| Edge::Pos(a, b)));
        for &f in fences {
            v.extend(pairs.map(|(a, b)| Edge::Fenced(f, a, b)));
        }
        v
    }
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Edge::Rfe => f.write_str("Rfe"),
            Edge::Fre => f.write_str("Fre"),
            Edge::Wse => f.write_str("Wse"),
            Edge::Pod(a, b) => write!(f, "Pod{}{}", a.letter(), b.letter()),
            Edge::Pos(a, b) => write!(f, "Pos{}{}", a.letter(), b.letter()),
            Edge::Fenced(o, a, b) => write!(f, "Fenced{}{}{}", fence_word(o), a.letter(), b.letter()),
        }
    }
}

impl FromStr for Edge {
    type Err = String;

    /// diy's names: `Rfe`, `Fre`, `Wse` (or `Coe`), `PodRW`, `PosWR`,
    /// `FencedscWR` (fences `sc`, `ar`, `rel`, `acq`).
    fn from_str(s: &str) -> Result<Edge, String> {
        let bad = || {
            format!(
                "unknown edge `{s}`; expected Rfe, Fre, Wse, PodXY, PosXY or Fenced{{sc,ar,rel,acq}}XY with X, Y in R, W"
            )
        };
        match s {
            "Rfe" => return Ok(Edge::Rfe),
            "Fre" => return Ok(Edge::Fre),
            "Wse" | "Coe" => return Ok(Edge::Wse),
            _ => {}
        }
        let dirs = |t: &str| -> Option<(Dir, Dir)> {
            let d = |c: char| match c {
                'R' => Some(Dir::R),
                'W' => Some(Dir::W),
                _ => None,
            };
            let mut cs = t.chars();
            let r = (d(cs.next()?)?, d(cs.next()?)?);
            cs.next().is_none().then_some(r)
        };
        if let Some(t) = s.strip_prefix("Pod") {
            return dirs(t).map(|(a, b)| Edge::Pod(a, b)).ok_or_else(bad);
        }
        if let Some(t) = s.strip_prefix("Pos") {
            return dirs(t).map(|(a, b)| Edge::Pos(a, b)).ok_or_else(bad);
        }
        if let Some(t) = s.strip_prefix("Fenced") {
            for o in [Order::SeqCst, Order::AcqRel, Order::Release, Order::Acquire] {
                if let Some(rest) = t.strip_prefix(fence_word(o)) {
                    if let Some((a, b)) = dirs(rest) {
                        return Ok(Edge::Fenced(o, a, b));
                    }
                }
            }
        }
        Err(bad())
    }
}

/// The memory orders of a generated test's accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Annotation {
    /// Every access relaxed.
    Relaxed,
    /// Writes release, reads acquire.
    RelAcq,
    /// Every access seq_cst.
    SeqCst,
    /// Each access's order drawn from relaxed, acquire/release and seq_cst
    /// by a generator seeded with the number.
    Mixed(u64),
}

impl Annotation {
    /// Suffix of the test name: `rlx`, `ra`, `sc`, `mixN`.
    pub fn name(self) -> String {
        match self {
            Annotation::Relaxed => "rlx".into(),
            Annotation::RelAcq => "ra".into(),
            Annotation::SeqCst => "sc".into(),
            Annotation::Mixed(s) => format!("mix{s}"),
        }
    }
}

/// Why a list of edges is not a cycle a test can be made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleError(pub String);

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CycleError {}

/// A valid relaxation cycle (see [`Cycle::new`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cycle {
    edges: Vec<Edge>,
}

/// One event of the test a cycle describes.
#[derive(Debug, Clone, Copy)]
struct Event {
    dir: Dir,
    thread: usize,
    loc: usize,
    /// A write's value; a read's expected value.
    value: i64,
    /// A fence to put before the event (the `Fenced` edge reaching it).
    fence_before: Option<Order>,
}

const LOC_NAMES: [&str; 8] = ["x", "y", "z", "w", "v", "u", "t", "s"];

impl Cycle {
    /// The cycle of `edges`, or why it is none: each edge must leave the
    /// kind of event the previous one reaches (and the last the kind the
    /// first leaves); at least two edges go to another thread (a test has
    /// two threads at least, and no thread meets itself); no location or
    /// at least two location changes (one alone would return to the
    /// location it left), and at least one (a one-location cycle has no
    /// well-founded coherence order to write down); at most eight
    /// locations.
    pub fn new(edges: Vec<Edge>) -> Result<Cycle, CycleError> {
        let n = edges.len();
        if n < 2 {
            return Err(CycleError(format!("a cycle has at least two edges, not {n}")));
        }
        for i in 0..n {
            let (a, b) = (edges[i], edges[(i + 1) % n]);
            if a.dst() != b.src() {
                return Err(CycleError(format!(
                    "`{a}` reaches a {} but `{b}` leaves a {}",
                    a.dst().letter(),
                    b.src().letter()
                )));
            }
        }
        let ext = edges.iter().filter(|e| e.external()).count();
        if ext < 2 {
            return Err(CycleError(format!("{ext} external edge(s) (Rfe, Fre, Wse): a cycle needs two at least")));
        }
        let locs = edges.iter().filter(|e| e.changes_location()).count();
        if locs < 2 {
            return Err(CycleError(format!("{locs} location change(s) (Pod, Fenced): a cycle needs two at least")));
        }
        if locs > LOC_NAMES.len() {
            return Err(CycleError(format!("{locs} locations: at most {}", LOC_NAMES.len())));
        }
        Ok(Cycle { edges })
    }

    /// Parse `Rfe PodRR Fre PodWW` (edges separated by spaces or `+`).
    pub fn parse(s: &str) -> Result<Cycle, CycleError> {
        let edges = s
            .split(|c: char| c == '+' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<Edge>().map_err(CycleError))
            .collect::<Result<Vec<_>, _>>()?;
        Cycle::new(edges)
    }

    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// diy's name: the edges joined by `+`.
    pub fn name(&self) -> String {
        self.edges.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("+")
    }

    /// The events, starting after an external edge so that threads are
    /// contiguous: event `i` is reached by edge `i - 1` and left by edge `i`
    /// of the rotated cycle.
    fn events(&self) -> Vec<Event> {
        let n = self.edges.len();
        // Rotate so that the edge before event 0 is external.
        let start = (0..n).find(|&i| self.edges[(i + n - 1) % n].external()).expect("a cycle has an external edge");
        let edge = |i: usize| self.edges[(start + i) % n];
        let mut ev: Vec<Event> = Vec::with_capacity(n);
        let mut thread = 0;
        for i in 0..n {
            if i > 0 && edge(i - 1).external() {
                thread += 1;
            }
            let fence_before = match edge((i + n - 1) % n) {
                Edge::Fenced(o, ..) => Some(o),
                _ => None,
            };
            ev.push(Event { dir: edge(i).src(), thread, loc: 0, value: 0, fence_before });
        }
        // Locations and values: walk from an event a location change
        // reaches; each location is a path of events along the cycle, its
        // writes numbered 1, 2, ... in that order (coherence order), each
        // read reading the latest write before it (or the initial 0).
        let entry = (0..n).find(|&i| edge((i + n - 1) % n).changes_location()).expect("two location changes");
        let mut loc = 0;
        let mut last = 0;
        for k in 0..n {
            let i = (entry + k) % n;
            if k > 0 && edge((i + n - 1) % n).changes_location() {
                loc += 1;
                last = 0;
            }
            ev[i].loc = loc;
            match ev[i].dir {
                Dir::W => {
                    last += 1;
                    ev[i].value = last;
                }
                Dir::R => ev[i].value = last,
            }
        }
        ev
    }

    /// Number of threads of the test.
    pub fn threads(&self) -> usize {
        self.edges.iter().filter(|e| e.external()).count()
    }

    /// Number of locations of the test.
    pub fn locations(&self) -> usize {
        self.edges.iter().filter(|e| e.changes_location()).count()
    }

    /// The test in herd's C litmus format.
    pub fn to_c(&self, ann: Annotation) -> String {
        let ev = self.events();
        let nlocs = self.locations();
        let mut rng = match ann {
            Annotation::Mixed(s) => s.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            _ => 0,
        };
        let mut order = |d: Dir| -> Order {
            match ann {
                Annotation::Relaxed => Order::Relaxed,
                Annotation::SeqCst => Order::SeqCst,
                Annotation::RelAcq | Annotation::Mixed(_) => {
                    let pick = if let Annotation::Mixed(_) = ann {
                        // xorshift64
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        rng % 3
                    } else {
                        1
                    };
                    match (pick, d) {
                        (0, _) => Order::Relaxed,
                        (1, Dir::R) => Order::Acquire,
                        (1, Dir::W) => Order::Release,
                        _ => Order::SeqCst,
                    }
                }
            }
        };
        let params = LOC_NAMES[..nlocs].iter().map(|l| format!("atomic_int* {l}")).collect::<Vec<_>>().join(", ");
        let mut out = format!("C {}+{}\n\n{{ ", self.name(), ann.name());
        for l in &LOC_NAMES[..nlocs] {
            out.push_str(&format!("{l}=0; "));
        }
        out.push_str("}\n");
        let mut cond = Vec::new();
        let threads = ev.iter().map(|e| e.thread).max().unwrap_or(0) + 1;
        for t in 0..threads {
            out.push_str(&format!("\nP{t}({params}) {{\n"));
            let mut reg = 0;
            for (i, e) in ev.iter().enumerate().filter(|(_, e)| e.thread == t) {
                if let Some(f) = e.fence_before {
                    // The first event of a thread is reached by an external edge.
                    debug_assert!(i > 0 && ev[i - 1].thread == t);
                    out.push_str(&format!("  atomic_thread_fence({});\n", f.c_name()));
                }
                let l = LOC_NAMES[e.loc];
                let o = order(e.dir).c_name();
                match e.dir {
                    Dir::W => out.push_str(&format!("  atomic_store_explicit({l}, {}, {o});\n", e.value)),
                    Dir::R => {
                        out.push_str(&format!("  int r{reg} = atomic_load_explicit({l}, {o});\n"));
                        cond.push(format!("{t}:r{reg}={}", e.value));
                        reg += 1;
                    }
                }
            }
            out.push_str("}\n");
        }
        for (loc, name) in LOC_NAMES.iter().enumerate().take(nlocs) {
            let writes: Vec<i64> = ev.iter().filter(|e| e.loc == loc && e.dir == Dir::W).map(|e| e.value).collect();
            if let (true, Some(last)) = (writes.len() >= 2, writes.iter().max()) {
                cond.push(format!("{name}={last}"));
            }
        }
        if cond.is_empty() {
            cond.push("true".into());
        }
        out.push_str(&format!("\nexists ({})\n", cond.join(" /\\ ")));
        out
    }

    /// The test as a program, through the litmus parser.
    pub fn program(&self, ann: Annotation) -> Result<Program, LitmusError> {
        let text = self.to_c(ann);
        litmus::parse(&text, &format!("{}+{}", self.name(), ann.name()))
    }
}

/// Every cycle of at most `max_edges` edges of `vocabulary` with at most
/// `max_threads` threads and `max_locs` locations, one per rotation class
/// (the rotation that is smallest in the vocabulary's order), shortest
/// first, in a fixed order.
pub fn cycles(vocabulary: &[Edge], max_edges: usize, max_threads: usize, max_locs: usize) -> Vec<Cycle> {
    let mut out = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    for n in 2..=max_edges {
        extend(vocabulary, n, max_threads, max_locs, &mut cur, &mut out);
    }
    out
}

fn extend(voc: &[Edge], n: usize, max_threads: usize, max_locs: usize, cur: &mut Vec<usize>, out: &mut Vec<Cycle>) {
    if cur.len() == n {
        let edges: Vec<Edge> = cur.iter().map(|&i| voc[i]).collect();
        // Canonical: no rotation is smaller.
        if (1..n).any(|r| cur[r..].iter().chain(&cur[..r]).lt(cur.iter())) {
            return;
        }
        if let Ok(c) = Cycle::new(edges) {
            if c.threads() <= max_threads && c.locations() <= max_locs {
                out.push(c);
            }
        }
        return;
    }
    for (i, e) in voc.iter().enumerate() {
        if let Some(&p) = cur.last() {
            if voc[p].dst() != e.src() {
                continue;
            }
        }
        // The first edge is the smallest of a canonical rotation.
        if !cur.is_empty() && i < cur[0] {
            continue;
        }
        cur.push(i);
        extend(voc, n, max_threads, max_locs, cur, out);
        cur.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mp_from_its_cycle() {
        let c = Cycle::parse("Rfe PodRR Fre PodWW").unwrap();
        let p = c.program(Annotation::Relaxed).unwrap();
        assert_eq!(p.threads.len(), 2);
        assert_eq!(p.locations.len(), 2);
        let text = c.to_c(Annotation::Relaxed);
        // Threads start after an external edge: P0 reads y (=1) then x
        // (=0), P1 writes x then y: MP.
        assert!(text.contains("P0(atomic_int* x, atomic_int* y) {\n  int r0 = atomic_load_explicit(y, "), "{text}");
        assert!(text.contains("exists (0:r0=1 /\\ 0:r1=0)"), "{text}");
    }

    #[test]
    fn bad_cycles_are_refused() {
        assert!(Cycle::parse("Rfe PodWW").unwrap_err().0.contains("reaches a R"));
        assert!(Cycle::parse("Rfe PodRW Rfe PodRW").is_ok());
        assert!(Cycle::parse("Rfe PodRR Fre PosWW").unwrap_err().0.contains("location change"));
        assert!(Cycle::parse("Rfe Poq").unwrap_err().0.contains("unknown edge"));
    }

    #[test]
    fn edges_round_trip() {
        for e in Edge::vocabulary(&[Order::SeqCst, Order::AcqRel, Order::Release, Order::Acquire]) {
            assert_eq!(e.to_string().parse::<Edge>().unwrap(), e);
        }
    }

    #[test]
    fn enumeration_is_one_per_rotation() {
        let voc = Edge::vocabulary(&[]);
        let cs = cycles(&voc, 4, 8, 4);
        let names: std::collections::HashSet<String> = cs.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), cs.len());
        // MP, SB, LB, S, R, 2+2W: the six two-thread cycles of four Pod/com edges.
        for want in ["Rfe+PodRR+Fre+PodWW", "Fre+PodWR+Fre+PodWR", "Rfe+PodRW+Rfe+PodRW"] {
            let c = Cycle::parse(want).unwrap();
            let n = c.edges().len();
            let found = cs.iter().any(|d| (0..n).any(|r| d.edges()[r..].iter().chain(&d.edges()[..r]).eq(c.edges())));
            assert!(found, "{want} not generated");
        }
    }
}
