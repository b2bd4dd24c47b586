//! Synthetic address patterns and the address-to-memory interleaving.

use super::zipf::ScrambledZipf;
use super::{Access, WorkloadSpec};
use crate::agents::protocol::{OpKind, OpOrder, WorkOp};
use crate::engine::rng::Stream;
use crate::workloads::kinds::Pattern;
use crate::workloads::source::{Next, OpSource};

/// Produces a requester's accesses, one at a time, without allocating.
pub struct Generator {
    pattern: Pattern,
    line: u64,
    lines: u64,
    read_fraction: f64,
    hot_lines: u64,
    hot_probability: f64,
    next_line: u64,
    /// Permutation pattern: the one target of this requester.
    fixed_target: Option<u32>,
    interleave: u64,
    n_targets: u64,
    zipf: ScrambledZipf,
}

impl Generator {
    /// `index` is this requester's position among `count` requesters;
    /// `perm` is the run's permutation of targets (permutation pattern).
    pub fn new(spec: &WorkloadSpec, index: u32, count: u32, perm: &[u32]) -> Self {
        let line = spec.line as u64;
        let lines = (spec.footprint / line).max(1);
        let region = lines / count.max(1) as u64;
        Self {
            pattern: spec.pattern,
            line,
            lines,
            read_fraction: spec.read_fraction,
            hot_lines: ((lines as f64 * spec.hot_fraction).round() as u64).clamp(1, lines),
            hot_probability: spec.hot_probability,
            next_line: match spec.pattern {
                Pattern::OwnLine => index as u64 % lines,
                _ => region * index as u64,
            },
            fixed_target: if spec.pattern == Pattern::Permutation && !perm.is_empty() {
                Some(perm[index as usize % perm.len()])
            } else {
                None
            },
            interleave: spec.interleave,
            n_targets: spec.targets.len() as u64,
            zipf: ScrambledZipf::ycsb(lines),
        }
    }

    /// The next access and the position (in the workload's target list) of
    /// the memory that serves it.
    #[inline]
    pub fn next(&mut self, rng: &mut Stream) -> (Access, u32) {
        let l = match self.pattern {
            Pattern::Stream => {
                let l = self.next_line;
                self.next_line = (self.next_line + 1) % self.lines;
                l
            }
            // (a trace replays its records and producer_consumer drives only protocol cores:
            // validation keeps both from reaching a generator)
            Pattern::Uniform | Pattern::Permutation | Pattern::Trace | Pattern::Kernel => rng.below(self.lines),
            Pattern::Zipf => self.zipf.key(rng.unit()),
            Pattern::OwnLine => self.next_line,
            Pattern::Hotspot => {
                if rng.unit() < self.hot_probability || self.hot_lines == self.lines {
                    rng.below(self.hot_lines)
                } else {
                    self.hot_lines + rng.below(self.lines - self.hot_lines)
                }
            }
        };
        let write = rng.unit() >= self.read_fraction;
        let addr = l * self.line;
        let target = match self.fixed_target {
            Some(t) => t,
            None => interleave(addr, self.interleave, self.n_targets),
        };
        (Access { write, addr, bytes: self.line as u32 }, target)
    }
}

/// A generator as a protocol core's source: plain loads and stores of
/// whole lines of `line` bytes (the protocol's line).
pub struct PatternSource {
    pub gen: Generator,
    pub line: u64,
}

impl OpSource for PatternSource {
    fn next(&mut self, value: u64, rng: &mut Stream) -> Next {
        let (access, _) = self.gen.next(rng);
        Next::op(plain_op(access.addr, access.write, self.line, value))
    }
}

/// A load or a store of the whole line at `addr`, as the generic sources issue.
pub fn plain_op(addr: u64, write: bool, line: u64, value: u64) -> WorkOp {
    WorkOp {
        line: addr / line.max(1),
        kind: if write { OpKind::Store } else { OpKind::Load },
        value,
        order: OpOrder::Relaxed,
        bytes: 0,
    }
}

/// Which of `n` memories serves `addr` when addresses interleave every `granule` bytes.
#[inline]
pub fn interleave(addr: u64, granule: u64, n: u64) -> u32 {
    ((addr / granule) % n) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::kinds::{Arrival, Injection};

    fn spec(pattern: Pattern) -> WorkloadSpec {
        WorkloadSpec {
            pattern,
            requests: 10,
            warmup: 0,
            read_fraction: 0.5,
            line: 64,
            header_bytes: 0,
            data_header: 0,
            injection: Injection::Closed,
            window: 1,
            interval: 0,
            arrival: Arrival::Poisson,
            footprint: 64 * 1000,
            interleave: 64,
            hot_fraction: 0.1,
            hot_probability: 0.9,
            targets: vec![0, 1, 2, 3],
            trace: None,
            kernel: None,
            posted_writes: false,
            instructions: 0,
            dependent: 0.0,
        }
    }

    #[test]
    fn stream_is_sequential_and_interleaves() {
        let mut g = Generator::new(&spec(Pattern::Stream), 0, 1, &[]);
        let mut rng = Stream::new(1, 0);
        let t: Vec<u32> = (0..5).map(|_| g.next(&mut rng).1).collect();
        assert_eq!(t, vec![0, 1, 2, 3, 0]);
    }

    #[test]
    fn hotspot_concentrates_accesses() {
        let mut g = Generator::new(&spec(Pattern::Hotspot), 0, 1, &[]);
        let mut rng = Stream::new(1, 0);
        let n = 100_000;
        let hot = (0..n).filter(|_| g.next(&mut rng).0.addr < 6400).count();
        let frac = hot as f64 / n as f64;
        assert!((frac - 0.9).abs() < 0.01, "{frac}");
    }

    #[test]
    fn zipf_is_skewed_like_ycsb() {
        // 1000 lines: YCSB's most popular key takes 1/zeta(1e10, 0.99) = 3.8% of draws (plus the few
        // ranks that hash onto the same line); the ten most popular lines about a fifth.
        let mut g = Generator::new(&spec(Pattern::Zipf), 0, 1, &[]);
        let mut rng = Stream::new(5, 0);
        let n = 200_000;
        let mut counts = vec![0u32; 1000];
        for _ in 0..n {
            counts[(g.next(&mut rng).0.addr / 64) as usize] += 1;
        }
        assert_eq!(counts.iter().enumerate().max_by_key(|c| c.1).unwrap().0, 211, "YCSB's hottest key");
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top = counts[0] as f64 / n as f64;
        let top10 = counts[..10].iter().sum::<u32>() as f64 / n as f64;
        assert!((0.036..0.045).contains(&top), "{top}");
        assert!((0.12..0.30).contains(&top10), "{top10}");
        assert!(counts[999] < counts[0] / 20, "the tail is cold");
    }

    #[test]
    fn read_fraction_is_respected() {
        let mut g = Generator::new(&spec(Pattern::Uniform), 0, 1, &[]);
        let mut rng = Stream::new(3, 0);
        let n = 100_000;
        let w = (0..n).filter(|_| g.next(&mut rng).0.write).count() as f64 / n as f64;
        assert!((w - 0.5).abs() < 0.01, "{w}");
    }

    #[test]
    fn permutation_sends_each_requester_to_one_target() {
        let mut g = Generator::new(&spec(Pattern::Permutation), 2, 4, &[3, 1, 0, 2]);
        let mut rng = Stream::new(1, 0);
        assert!((0..100).all(|_| g.next(&mut rng).1 == 0));
    }
}
