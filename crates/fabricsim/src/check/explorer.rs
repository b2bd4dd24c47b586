//! Exhaustive, breadth-first exploration of a protocol's reachable states.
//!
//! Breadth-first, so the first violation found has a shortest trace. The
//! visited set holds 128-bit fingerprints (see `fingerprint`); the frontier
//! holds full states (one breadth-first layer at a time, in flat arrays:
//! no allocation per state or per transition); for each state only its parent and the transition
//! that reached it are kept, and a counterexample is rebuilt by replaying
//! those transitions from the initial state.

use std::time::Instant;

use serde_json::json;

use super::fingerprint::FingerprintSet;
use super::world::{Envelope, Label, World};
use crate::agents::protocol::Protocol;

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Stop after this many states (the result says the search was cut).
    pub max_states: Option<u64>,
    /// Do not expand states deeper than this.
    pub max_depth: Option<u32>,
    /// Report states where work is pending but only environment actions
    /// (or nothing) can happen.
    pub check_deadlock: bool,
    /// Polled about every thousand states; when it asks, the search stops
    /// and the report says `interrupted` (and not `complete`).
    pub stop: super::Stop,
}

/// A violation and the shortest execution that reaches it.
#[derive(Debug, Clone)]
pub struct Counterexample {
    pub kind: String,
    pub detail: String,
    pub steps: Vec<TraceStep>,
}

#[derive(Debug, Clone)]
pub struct TraceStep {
    pub step: usize,
    /// "deliver" or "action".
    pub what: &'static str,
    pub from: Option<String>,
    pub agent: String,
    pub event: String,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub protocol: String,
    pub states: u64,
    pub transitions: u64,
    pub depth: u32,
    pub seconds: f64,
    pub peak_rss_kb: u64,
    /// Whether every reachable state was visited (no bound was hit).
    pub complete: bool,
    pub violation: Option<Counterexample>,
    /// Quiescent states with no enabled transition (for litmus outcomes).
    pub final_states: u64,
    /// Stopped from outside (Ctrl-C) before the search finished.
    pub interrupted: bool,
}

impl Report {
    pub fn states_per_s(&self) -> f64 {
        self.states as f64 / self.seconds.max(1e-9)
    }

    /// Upper bound on the probability that hash compaction omitted a state.
    pub fn omission_bound(&self) -> f64 {
        let n = self.states as f64;
        n * n / 2f64.powi(129)
    }

    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "protocol": self.protocol,
            "ok": self.violation.is_none(),
            "complete": self.complete,
            "interrupted": self.interrupted,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "seconds": self.seconds,
            "states_per_s": self.states_per_s(),
            "peak_rss_kb": self.peak_rss_kb,
            "omission_probability_bound": self.omission_bound(),
            "violation": self.violation.as_ref().map(|v| json!({
                "kind": v.kind,
                "detail": v.detail,
                "trace": v.steps.iter().map(|s| json!({
                    "step": s.step, "what": s.what, "from": s.from, "agent": s.agent,
                    "event": s.event, "before": s.before, "after": s.after,
                })).collect::<Vec<_>>(),
            })),
        })
    }

    /// The counterexample as text: one line per step.
    pub fn trace_text(&self) -> String {
        let Some(v) = &self.violation else { return String::new() };
        let mut s = format!("{}: {}\n", v.kind, v.detail);
        for t in &v.steps {
            let who = match &t.from {
                Some(f) => format!("{f} -> {}", t.agent),
                None => t.agent.clone(),
            };
            s += &format!(
                "{:>4}  {:<22} {}\n        before: {}\n        after:  {}\n",
                t.step, who, t.event, t.before, t.after
            );
        }
        s
    }
}

/// Peak resident memory of this process, in KiB (Linux; 0 elsewhere).
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// A transition's label.
type Edge<P> = Label<<P as Protocol>::Msg, <P as Protocol>::Action>;
/// A state's parent and the transition from it (none for initial states).
type Parent<P> = (u32, Option<Edge<P>>);

/// One breadth-first layer of states, stored flat (no allocation per
/// state): state `k` is `ids[k]`, `ghosts[k]`, the agents in
/// `agents[agent_end[k-1]..agent_end[k]]` and the messages in
/// `mail[mail_end[k-1]..mail_end[k]]`.
struct Layer<P: Protocol> {
    ids: Vec<u32>,
    ghosts: Vec<P::Ghost>,
    agents: Vec<P::Agent>,
    agent_end: Vec<u32>,
    mail: Vec<Envelope<P::Msg>>,
    mail_end: Vec<u32>,
}

impl<P: Protocol> Layer<P> {
    fn new() -> Self {
        Layer {
            ids: Vec::new(),
            ghosts: Vec::new(),
            agents: Vec::new(),
            agent_end: Vec::new(),
            mail: Vec::new(),
            mail_end: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.ghosts.clear();
        self.agents.clear();
        self.agent_end.clear();
        self.mail.clear();
        self.mail_end.clear();
    }

    fn push(&mut self, id: u32, w: &World<P>) {
        self.ids.push(id);
        self.ghosts.push(w.ghost.clone());
        self.agents.extend_from_slice(&w.agents);
        self.agent_end.push(self.agents.len() as u32);
        self.mail.extend_from_slice(&w.mail);
        self.mail_end.push(self.mail.len() as u32);
    }

    /// Copy state `k` into `w` (reusing its buffers); its id.
    fn load(&self, k: usize, w: &mut World<P>) -> u32 {
        let (a0, m0) = if k == 0 { (0, 0) } else { (self.agent_end[k - 1] as usize, self.mail_end[k - 1] as usize) };
        w.agents.clear();
        w.agents.extend_from_slice(&self.agents[a0..self.agent_end[k] as usize]);
        w.mail.clear();
        w.mail.extend_from_slice(&self.mail[m0..self.mail_end[k] as usize]);
        w.ghost.clone_from(&self.ghosts[k]);
        self.ids[k]
    }
}

/// Explore every state reachable from the protocol's initial states.
/// `on_final` sees each quiescent state that has no successor.
pub fn explore<P: Protocol>(p: &P, opts: &Options, on_final: &mut dyn FnMut(&World<P>)) -> Report {
    let t0 = Instant::now();
    let mut visited = FingerprintSet::default();
    // parent index and the label that reached each state, in discovery order
    let mut parents: Vec<Parent<P>> = Vec::new();
    let mut frontier = Layer::<P>::new();
    let mut next_frontier = Layer::<P>::new();
    let inits: Vec<World<P>> = p.initial().into_iter().map(|(a, g)| World::new(a, g)).collect();
    let mut violation = None;
    for w in &inits {
        if visited.insert(w.orbit_fingerprint(p)) {
            parents.push((u32::MAX, None));
            let id = (parents.len() - 1) as u32;
            if let Err((k, d)) = p.invariant(&w.agents, &w.ghost) {
                violation.get_or_insert((id, None, k, d));
            }
            frontier.push(id, w);
        }
    }
    let Some(first) = inits.first() else {
        return Report {
            protocol: p.name(),
            states: 0,
            transitions: 0,
            depth: 0,
            seconds: t0.elapsed().as_secs_f64(),
            peak_rss_kb: peak_rss_kb(),
            complete: true,
            violation: None,
            final_states: 0,
            interrupted: false,
        };
    };
    // The state being expanded and its successors (scratch buffers,
    // reused for every state).
    let mut w = first.clone();
    let mut succ: Vec<World<P>> = Vec::new();
    // Per enabled transition of `w`, in order: its label, whether it is an
    // environment action, and its successor's fingerprint.
    let mut batch: Vec<(Edge<P>, bool, u128)> = Vec::new();
    let mut transitions = 0u64;
    let mut depth = 0u32;
    let mut complete = true;
    let mut final_states = 0u64;
    let mut interrupted = false;
    let mut expanded = 0u64;
    let mut sends = Vec::new();
    let mut idx = Vec::new();
    let mut acts = Vec::new();
    'search: while !frontier.is_empty() && violation.is_none() {
        if opts.max_depth.is_some_and(|d| depth >= d) {
            complete = false;
            break;
        }
        next_frontier.clear();
        for k in 0..frontier.len() {
            let id = frontier.load(k, &mut w);
            // Take every enabled transition of `w` (in the order: deliveries,
            // then each agent's actions), up to the first error, then look
            // their successors up in the visited set in the same order. Each
            // lookup is prefetched as soon as its successor is known, so the
            // cache misses overlap the work on the next successors.
            batch.clear();
            let mut failed = None;
            'take: {
                idx.clear();
                w.deliverable(p, &mut idx);
                for &i in &idx {
                    if succ.len() == batch.len() {
                        succ.push(w.clone());
                    }
                    let label = Label::Deliver(w.mail[i]);
                    match w.deliver_into(p, i, &mut sends, &mut succ[batch.len()]) {
                        Ok(true) => {
                            let fp = succ[batch.len()].orbit_fingerprint(p);
                            visited.prefetch(fp);
                            batch.push((label, false, fp));
                        }
                        Ok(false) => {}
                        Err(v) => {
                            failed = Some((label, v));
                            break 'take;
                        }
                    }
                }
                for a in 0..w.agents.len() {
                    acts.clear();
                    p.actions(&w.agents[a], a as u8, &w.ghost, &mut acts);
                    for &action in &acts {
                        if succ.len() == batch.len() {
                            succ.push(w.clone());
                        }
                        let label = Label::Act { agent: a as u8, action };
                        match w.act_into(p, a as u8, action, &mut sends, &mut succ[batch.len()]) {
                            Ok(true) => {
                                let fp = succ[batch.len()].orbit_fingerprint(p);
                                visited.prefetch(fp);
                                batch.push((label, p.is_environment(&action), fp));
                            }
                            Ok(false) => {}
                            Err(v) => {
                                failed = Some((label, v));
                                break 'take;
                            }
                        }
                    }
                }
            }
            let any = !batch.is_empty();
            let mut progress = false;
            for (j, &(label, env, fp)) in batch.iter().enumerate() {
                transitions += 1;
                progress |= !env;
                if visited.insert(fp) {
                    parents.push((id, Some(label)));
                    let nid = (parents.len() - 1) as u32;
                    let n = &succ[j];
                    if let Err((k, d)) = p.invariant(&n.agents, &n.ghost) {
                        violation = Some((nid, None, k, d));
                        break 'search;
                    }
                    next_frontier.push(nid, n);
                }
            }
            if let Some((label, v)) = failed {
                violation = Some((id, Some(label), v.kind.to_string(), v.detail));
                break 'search;
            }
            let quiet = w.quiescent(p);
            if !any && quiet {
                final_states += 1;
                on_final(&w);
            } else if opts.check_deadlock && !progress && !quiet {
                violation = Some((
                    id,
                    None,
                    "deadlock".to_string(),
                    format!(
                        "work is pending ({} messages in flight, {} agents waiting) and nothing but new requests can happen",
                        w.mail.len(),
                        w.agents.iter().filter(|a| p.busy(a)).count()
                    ),
                ));
                break 'search;
            }
            if opts.max_states.is_some_and(|m| parents.len() as u64 >= m) {
                complete = false;
                break 'search;
            }
            expanded += 1;
            if expanded.is_multiple_of(1024) && opts.stop.requested() {
                complete = false;
                interrupted = true;
                break 'search;
            }
        }
        std::mem::swap(&mut frontier, &mut next_frontier);
        depth += 1;
    }
    let counterexample = violation.map(|(id, extra, kind, detail)| Counterexample {
        kind,
        detail,
        steps: rebuild(p, &parents, id, extra),
    });
    if counterexample.is_some() {
        complete = false;
    }
    Report {
        protocol: p.name(),
        states: parents.len() as u64,
        transitions,
        depth,
        seconds: t0.elapsed().as_secs_f64(),
        peak_rss_kb: peak_rss_kb(),
        complete,
        violation: counterexample,
        final_states,
        interrupted,
    }
}

/// Replay the labels from the initial state to state `id` (and one more
/// label, the failing one, if given).
fn rebuild<P: Protocol>(p: &P, parents: &[Parent<P>], id: u32, extra: Option<Edge<P>>) -> Vec<TraceStep> {
    let mut labels = Vec::new();
    let mut cur = id;
    while let Some((parent, Some(label))) = parents.get(cur as usize).cloned() {
        labels.push(label);
        cur = parent;
    }
    labels.reverse();
    let root = cur as usize;
    let inits: Vec<World<P>> = p.initial().into_iter().map(|(a, g)| World::new(a, g)).collect();
    // Roots are the first states discovered, in the order of `initial()`
    // after duplicates; find the one whose fingerprint matches.
    let mut seen = FingerprintSet::default();
    let mut w = inits
        .into_iter()
        .filter(|w| seen.insert(w.orbit_fingerprint(p)))
        .nth(root)
        .expect("trace starts at an initial state");
    let mut steps = Vec::new();
    let total = labels.len() + extra.is_some() as usize;
    for (n, label) in labels.into_iter().chain(extra).enumerate() {
        let (what, from, agent) = match &label {
            Label::Deliver(e) => ("deliver", Some(p.agent_name(e.from)), e.to),
            Label::Act { agent, .. } => ("action", None, *agent),
        };
        let event = match &label {
            Label::Deliver(e) => format!("{:?}", e.msg),
            Label::Act { action, .. } => format!("{action:?}"),
        };
        let before = format!("{:?}", w.agents[agent as usize]);
        let next = w.replay(p, &label);
        let after = match &next {
            Some(n) => format!("{:?}", n.agents[agent as usize]),
            None if n + 1 == total => "(violation)".to_string(),
            None => "(not replayable)".to_string(),
        };
        steps.push(TraceStep { step: n + 1, what, from, agent: p.agent_name(agent), event, before, after });
        match next {
            Some(nw) => w = nw,
            None => break,
        }
    }
    steps
}
