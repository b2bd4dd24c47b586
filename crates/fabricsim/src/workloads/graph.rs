//! Power-law graphs for BI's PageRank (seed 001, Fig 13): a seeded R-MAT
//! generator, PowerGraph's random vertex cut over sockets, and synchronous
//! PageRank whose remote reads may return the previous iteration's value
//! (BI-periodic's staleness, §6.3 "Staleness Analysis").
//!
//! The paper runs PowerGraph on the Twitter follower graph (LAW
//! twitter-2010: 41.7 M vertices, 1.47 G arcs; the paper's "4.1 million" is
//! a typo). This machine cannot hold that, so the experiments run R-MAT at a
//! smaller scale with Twitter's average degree (edge factor 35) and
//! Graph500's initiator (A 0.57, B = C 0.19, D 0.05). What Fig 13 needs from
//! the graph is its *shape*: per socket the edges, masters and mirrors, and
//! how many replica pairs talk across each pair of sockets; those scale with
//! the edge count, and the experiment scales them up to Twitter's.
//!
//! Choices (stated in the experiment file too): duplicate edges and
//! self-loops are kept (Graph500's generator keeps them); vertex labels are
//! not permuted (a random vertex cut does not look at labels); a vertex
//! with no edge has no replica and is left out of the replication factor,
//! as PowerGraph loads vertices from the edge list.

use crate::engine::rng::{mix, Stream};

/// The largest scale accepted: 2^26 vertices, about 2.3 G edges at edge
/// factor 35, far past what a laptop holds; checked before allocating.
pub const MAX_SCALE: u32 = 26;
/// At most this many edges (the CSR indexes them with u32 sources and
/// one byte of socket each: about 5 bytes an edge).
pub const MAX_EDGES: u64 = 1 << 31;
/// Sockets a vertex cut can span (replica sets are u16 masks).
pub const MAX_SOCKETS: usize = 16;

/// Graph500's Kronecker initiator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rmat {
    pub scale: u32,
    pub edge_factor: u32,
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl Rmat {
    /// Graph500's initiator with Twitter-2010's average degree (35.25).
    pub fn twitter_like(scale: u32) -> Self {
        Rmat { scale, edge_factor: 35, a: 0.57, b: 0.19, c: 0.19 }
    }

    pub fn vertices(&self) -> u64 {
        1u64 << self.scale
    }

    pub fn edges(&self) -> u64 {
        self.vertices() * self.edge_factor as u64
    }

    fn check(&self) -> Result<(), String> {
        if self.scale == 0 || self.scale > MAX_SCALE {
            return Err(format!("scale {}: expected 1 to {MAX_SCALE}", self.scale));
        }
        if self.edge_factor == 0 {
            return Err("edge_factor 0: expected at least 1".into());
        }
        if self.edges() > MAX_EDGES {
            return Err(format!(
                "scale {} with edge_factor {} makes {} edges: expected at most {MAX_EDGES}",
                self.scale,
                self.edge_factor,
                self.edges()
            ));
        }
        let d = 1.0 - self.a - self.b - self.c;
        if !(self.a > 0.0 && self.b >= 0.0 && self.c >= 0.0 && d >= 0.0) {
            return Err(format!(
                "initiator a {} b {} c {}: expected non-negative probabilities with a > 0 and a + b + c <= 1",
                self.a, self.b, self.c
            ));
        }
        Ok(())
    }

    /// Edge `k` of the graph, from its own random stream, so two passes
    /// (count, then fill) see the same edges without storing them.
    fn edge(&self, seed: u64, k: u64) -> (u32, u32) {
        let mut s = Stream::new(seed, k);
        let (ab, abc) = (self.a + self.b, self.a + self.b + self.c);
        let (mut u, mut v) = (0u32, 0u32);
        for _ in 0..self.scale {
            let r = s.unit();
            let (i, j) = if r < self.a {
                (0, 0)
            } else if r < ab {
                (0, 1)
            } else if r < abc {
                (1, 0)
            } else {
                (1, 1)
            };
            u = (u << 1) | i;
            v = (v << 1) | j;
        }
        (u, v)
    }
}

/// A directed graph stored by destination (in-edges), as PageRank gathers.
/// Edge `e` (a CSR position) goes from `sources[e]` to the vertex whose
/// range `offsets[v]..offsets[v+1]` holds it; `ids[e]` is its generation
/// index, which the vertex cut hashes to place it.
#[derive(Debug, Clone)]
pub struct Graph {
    pub offsets: Vec<u64>,
    pub sources: Vec<u32>,
    pub ids: Vec<u32>,
    pub out_degree: Vec<u32>,
}

impl Graph {
    pub fn rmat(r: &Rmat, seed: u64, stop: &dyn Fn() -> bool) -> Result<Self, String> {
        r.check()?;
        let n = r.vertices() as usize;
        let m = r.edges();
        let mut in_degree = vec![0u64; n + 1];
        let mut out_degree = vec![0u32; n];
        for k in 0..m {
            if k % (1 << 20) == 0 && stop() {
                return Err("interrupted".into());
            }
            let (u, v) = r.edge(seed, k);
            in_degree[v as usize + 1] += 1;
            out_degree[u as usize] += 1;
        }
        for v in 0..n {
            in_degree[v + 1] += in_degree[v];
        }
        let offsets = in_degree;
        let mut next = offsets.clone();
        let mut sources = vec![0u32; m as usize];
        let mut ids = vec![0u32; m as usize];
        for k in 0..m {
            if k % (1 << 20) == 0 && stop() {
                return Err("interrupted".into());
            }
            let (u, v) = r.edge(seed, k);
            let at = next[v as usize] as usize;
            next[v as usize] += 1;
            sources[at] = u;
            ids[at] = k as u32;
        }
        Ok(Graph { offsets, sources, ids, out_degree })
    }

    pub fn vertices(&self) -> usize {
        self.out_degree.len()
    }

    pub fn edges(&self) -> usize {
        self.sources.len()
    }

    /// In-edges plus out-edges of `v`.
    pub fn degree(&self, v: usize) -> u64 {
        self.offsets[v + 1] - self.offsets[v] + self.out_degree[v] as u64
    }
}

/// PowerGraph's random vertex cut: each edge goes to a socket uniformly at
/// random; a vertex has a replica on every socket holding one of its edges,
/// and one replica, chosen at random, is its master (Gonzalez et al.,
/// OSDI'12, §5; the paper's §6.1 "Vertex Cut").
#[derive(Debug, Clone)]
pub struct VertexCut {
    pub sockets: usize,
    /// The socket of each edge, by CSR position.
    pub edge_socket: Vec<u8>,
    /// Sockets holding a replica of each vertex (bit s = socket s).
    pub replicas: Vec<u16>,
    /// The master's socket (meaningless for a vertex without replicas).
    pub master: Vec<u8>,
}

/// What the cut leaves on each socket, which Fig 13's cost model charges.
#[derive(Debug, Clone, PartialEq)]
pub struct CutStats {
    pub sockets: usize,
    /// Vertices with at least one edge.
    pub vertices: u64,
    pub edges: Vec<u64>,
    pub masters: Vec<u64>,
    pub mirrors: Vec<u64>,
    /// `pairs[s][t]`: vertices mastered on `t` with a mirror on `s` (one
    /// gather message s → t and one apply message t → s per iteration in
    /// stock PowerGraph; one remote read each way under BI).
    pub pairs: Vec<Vec<u64>>,
    /// `edge_sources[s][t]`: edges on `s` whose source is mastered on `t`
    /// (under BI a mirror reads its vertex's data at the master, so these
    /// are the gather's reads of socket `t`'s memory from socket `s`).
    pub edge_sources: Vec<Vec<u64>>,
    /// Replicas per vertex with an edge.
    pub replication: f64,
    /// The closed form for a random cut, E[|A(v)|] = p(1 − (1 − 1/p)^deg v),
    /// averaged over the same vertices (PowerGraph, OSDI'12, Theorem 5.2).
    pub replication_expected: f64,
}

impl VertexCut {
    pub fn random(g: &Graph, sockets: usize, seed: u64) -> Result<Self, String> {
        if sockets == 0 || sockets > MAX_SOCKETS {
            return Err(format!("sockets {sockets}: expected 1 to {MAX_SOCKETS}"));
        }
        let n = g.vertices();
        let mut edge_socket = vec![0u8; g.edges()];
        let mut replicas = vec![0u16; n];
        for v in 0..n {
            for e in g.offsets[v] as usize..g.offsets[v + 1] as usize {
                let s = (mix(seed, g.ids[e] as u64, 0xC07) % sockets as u64) as u8;
                edge_socket[e] = s;
                replicas[v] |= 1 << s;
                replicas[g.sources[e] as usize] |= 1 << s;
            }
        }
        let master = (0..n)
            .map(|v| {
                let m = replicas[v];
                if m == 0 {
                    return 0;
                }
                let pick = mix(seed, v as u64, 0x3A5) % m.count_ones() as u64;
                nth_bit(m, pick as u32)
            })
            .collect();
        Ok(VertexCut { sockets, edge_socket, replicas, master })
    }

    /// The gather's vertex reads on `socket`, in the order it visits its
    /// edges (by destination): each edge's source and the source's master.
    pub fn gather_reads(&self, g: &Graph, socket: usize) -> Vec<(u32, u8)> {
        (0..g.edges())
            .filter(|&e| self.edge_socket[e] as usize == socket)
            .map(|e| (g.sources[e], self.master[g.sources[e] as usize]))
            .collect()
    }

    pub fn stats(&self, g: &Graph) -> CutStats {
        let p = self.sockets;
        let mut st = CutStats {
            sockets: p,
            vertices: 0,
            edges: vec![0; p],
            masters: vec![0; p],
            mirrors: vec![0; p],
            pairs: vec![vec![0; p]; p],
            edge_sources: vec![vec![0; p]; p],
            replication: 0.0,
            replication_expected: 0.0,
        };
        for (e, &s) in self.edge_socket.iter().enumerate() {
            st.edges[s as usize] += 1;
            st.edge_sources[s as usize][self.master[g.sources[e] as usize] as usize] += 1;
        }
        let (mut total, mut expected) = (0u64, 0.0f64);
        let miss = 1.0 - 1.0 / p as f64;
        for v in 0..g.vertices() {
            let m = self.replicas[v];
            if m == 0 {
                continue;
            }
            st.vertices += 1;
            total += m.count_ones() as u64;
            expected += p as f64 * (1.0 - miss.powf(g.degree(v) as f64));
            let t = self.master[v] as usize;
            st.masters[t] += 1;
            for s in (0..p).filter(|&s| s != t && m & (1 << s) != 0) {
                st.mirrors[s] += 1;
                st.pairs[s][t] += 1;
            }
        }
        if st.vertices > 0 {
            st.replication = total as f64 / st.vertices as f64;
            st.replication_expected = expected / st.vertices as f64;
        }
        st
    }
}

fn nth_bit(mask: u16, n: u32) -> u8 {
    let mut m = mask;
    for _ in 0..n {
        m &= m - 1;
    }
    m.trailing_zeros() as u8
}

/// PowerGraph's PageRank (its toolkit's `pagerank`: rank = 0.15 + 0.85 ×
/// Σ rank(u)/out(u) over in-edges), run in synchronous iterations until no
/// vertex changes by more than `tolerance` (the toolkit's default 10⁻³).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageRank {
    pub tolerance: f64,
    pub max_iterations: u32,
    /// The probability that a read of a vertex mastered on another socket
    /// returns its previous iteration's value (BI-periodic; 0 = stock and
    /// BI-on-demand, which quiesce at every barrier).
    pub p_stale: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PageRankRun {
    pub iterations: u32,
    pub converged: bool,
    /// Reads of a vertex mastered on another socket, and how many were stale.
    pub remote_reads: u64,
    pub stale_reads: u64,
    pub ranks: Vec<f64>,
}

impl PageRank {
    pub fn run(&self, g: &Graph, cut: &VertexCut, seed: u64, stop: &dyn Fn() -> bool) -> Result<PageRankRun, String> {
        if !(0.0..=1.0).contains(&self.p_stale) {
            return Err(format!("p_stale {}: expected a probability in [0, 1]", self.p_stale));
        }
        if self.tolerance.is_nan() || self.tolerance <= 0.0 {
            return Err(format!("tolerance {}: expected > 0", self.tolerance));
        }
        let n = g.vertices();
        // rank / out-degree per vertex, computed once an iteration
        let inv_degree: Vec<f64> = g.out_degree.iter().map(|&d| if d == 0 { 0.0 } else { 1.0 / d as f64 }).collect();
        let remote_edge: Vec<bool> =
            (0..g.edges()).map(|e| cut.master[g.sources[e] as usize] != cut.edge_socket[e]).collect();
        let remote_reads = remote_edge.iter().filter(|&&r| r).count() as u64;
        let (mut cur, mut old) = (vec![0.0f64; n], vec![0.0f64; n]);
        // Staleness is per cached line: each iteration, each (vertex,
        // socket) pair is stale with probability p_stale, drawn before the
        // iteration (geometric gaps over the pairs: the cost is the number
        // of stale pairs, not of reads), so a run does not depend on the
        // order edges are visited in.
        let p = cut.sockets;
        let mut stale_pairs = vec![0u64; (n * p).div_ceil(64)];
        let mut marked: Vec<usize> = Vec::new();
        let (mut older, mut prev) = (vec![1.0f64; n], vec![1.0f64; n]);
        let mut next = vec![0.0f64; n];
        let (mut remote, mut stale) = (0u64, 0u64);
        let mut iterations = 0;
        let mut converged = false;
        while iterations < self.max_iterations {
            if stop() {
                return Err("interrupted".into());
            }
            iterations += 1;
            for &i in &marked {
                stale_pairs[i / 64] = 0;
            }
            marked.clear();
            if self.p_stale > 0.0 {
                let mut rng = Stream::new(seed, iterations as u64);
                let log_q = (1.0 - self.p_stale).ln();
                let mut i = 0usize;
                loop {
                    // the gap to the next stale pair: geometric with parameter p_stale
                    let gap = if log_q == f64::NEG_INFINITY { 0.0 } else { ((1.0 - rng.unit()).ln() / log_q).floor() };
                    if gap >= (n * p - i) as f64 {
                        break;
                    }
                    i += gap as usize;
                    stale_pairs[i / 64] |= 1 << (i % 64);
                    marked.push(i);
                    i += 1;
                }
            }
            for ((c, r), d) in cur.iter_mut().zip(&prev).zip(&inv_degree) {
                *c = r * d;
            }
            if !marked.is_empty() {
                for ((c, r), d) in old.iter_mut().zip(&older).zip(&inv_degree) {
                    *c = r * d;
                }
            }
            remote += remote_reads;
            let mut change = 0.0f64;
            for v in 0..n {
                let mut sum = 0.0;
                let span = g.offsets[v] as usize..g.offsets[v + 1] as usize;
                let edges = g.sources[span.clone()].iter().zip(&remote_edge[span.clone()]).zip(&cut.edge_socket[span]);
                for ((&u, &far), &s) in edges {
                    let u = u as usize;
                    if far && !marked.is_empty() {
                        let pair = u * p + s as usize;
                        if stale_pairs[pair / 64] & (1 << (pair % 64)) != 0 {
                            stale += 1;
                            sum += old[u];
                            continue;
                        }
                    }
                    sum += cur[u];
                }
                next[v] = 0.15 + 0.85 * sum;
                change = change.max((next[v] - prev[v]).abs());
            }
            std::mem::swap(&mut older, &mut prev);
            std::mem::swap(&mut prev, &mut next);
            if change <= self.tolerance {
                converged = true;
                break;
            }
        }
        Ok(PageRankRun { iterations, converged, remote_reads: remote, stale_reads: stale, ranks: prev })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never() -> bool {
        false
    }

    fn small() -> Graph {
        Graph::rmat(&Rmat::twitter_like(12), 7, &never).unwrap()
    }

    #[test]
    fn rmat_has_its_edges_and_a_power_law_head() {
        let g = small();
        assert_eq!(g.edges(), 4096 * 35);
        assert_eq!(g.out_degree.iter().map(|&d| d as u64).sum::<u64>(), g.edges() as u64);
        let mut deg: Vec<u64> = (0..g.vertices()).map(|v| g.degree(v)).collect();
        deg.sort_unstable_by(|a, b| b.cmp(a));
        let mean = 2.0 * g.edges() as f64 / g.vertices() as f64;
        // R-MAT's hubs: the top vertex has far more than the mean degree
        assert!(deg[0] as f64 > 20.0 * mean, "top degree {} mean {mean}", deg[0]);
    }

    #[test]
    fn same_seed_same_graph_other_seed_other_graph() {
        let a = small();
        let b = small();
        let c = Graph::rmat(&Rmat::twitter_like(12), 8, &never).unwrap();
        assert_eq!(a.sources, b.sources);
        assert_ne!(a.sources, c.sources);
    }

    #[test]
    fn random_cut_matches_powergraphs_closed_form() {
        let g = Graph::rmat(&Rmat::twitter_like(14), 1, &never).unwrap();
        for p in [2, 4, 8] {
            let st = VertexCut::random(&g, p, 3).unwrap().stats(&g);
            let rel = (st.replication - st.replication_expected).abs() / st.replication_expected;
            assert!(rel < 0.02, "p {p}: {} vs {}", st.replication, st.replication_expected);
            assert_eq!(st.edges.iter().sum::<u64>(), g.edges() as u64);
            assert_eq!(st.masters.iter().sum::<u64>(), st.vertices);
            let replicas = (st.replication * st.vertices as f64).round() as u64;
            assert_eq!(st.masters.iter().sum::<u64>() + st.mirrors.iter().sum::<u64>(), replicas);
            let diag: u64 = (0..p).map(|s| st.pairs[s][s]).sum();
            assert_eq!(diag, 0);
            let by_source: Vec<u64> = st.edge_sources.iter().map(|r| r.iter().sum()).collect();
            assert_eq!(by_source, st.edges);
            let cut = VertexCut::random(&g, p, 3).unwrap();
            let reads = cut.gather_reads(&g, 1);
            assert_eq!(reads.len() as u64, st.edges[1]);
            let mut by_master = vec![0u64; p];
            for &(_, m) in &reads {
                by_master[m as usize] += 1;
            }
            assert_eq!(by_master, st.edge_sources[1]);
        }
    }

    #[test]
    fn more_sockets_more_replicas() {
        let g = small();
        let r: Vec<f64> =
            [1, 2, 4, 8].iter().map(|&p| VertexCut::random(&g, p, 3).unwrap().stats(&g).replication).collect();
        assert_eq!(r[0], 1.0);
        assert!(r.windows(2).all(|w| w[1] > w[0]), "{r:?}");
    }

    #[test]
    fn pagerank_converges_and_staleness_costs_iterations() {
        let g = small();
        let cut = VertexCut::random(&g, 8, 3).unwrap();
        let pr = PageRank { tolerance: 1e-3, max_iterations: 200, p_stale: 0.0 };
        let fresh = pr.run(&g, &cut, 5, &never).unwrap();
        assert!(fresh.converged);
        assert_eq!(fresh.stale_reads, 0);
        // the fixpoint: rank = 0.15 + 0.85 Σ in-contributions, to the tolerance
        let total: f64 = fresh.ranks.iter().sum();
        assert!(total > 0.15 * g.vertices() as f64);
        let stale = PageRank { p_stale: 1.0, ..pr }.run(&g, &cut, 5, &never).unwrap();
        assert!(stale.converged);
        assert_eq!(stale.stale_reads, stale.remote_reads);
        assert!(stale.iterations > fresh.iterations, "{} vs {}", stale.iterations, fresh.iterations);
        // on one socket nothing is remote, so nothing is stale
        let one = VertexCut::random(&g, 1, 3).unwrap();
        let r = PageRank { p_stale: 1.0, ..pr }.run(&g, &one, 5, &never).unwrap();
        assert_eq!(r.remote_reads, 0);
        assert_eq!(r.iterations, PageRank { p_stale: 0.0, ..pr }.run(&g, &one, 5, &never).unwrap().iterations);
    }

    #[test]
    fn bad_sizes_are_errors_before_allocating() {
        assert!(Graph::rmat(&Rmat::twitter_like(40), 1, &never).unwrap_err().contains("scale 40"));
        let r = Rmat { edge_factor: 1 << 20, ..Rmat::twitter_like(20) };
        assert!(Graph::rmat(&r, 1, &never).unwrap_err().contains("edges"));
        assert!(VertexCut::random(&small(), 17, 1).unwrap_err().contains("sockets 17"));
        let bad = PageRank { tolerance: 1e-3, max_iterations: 10, p_stale: 2.0 };
        let g = small();
        assert!(bad.run(&g, &VertexCut::random(&g, 2, 1).unwrap(), 1, &never).unwrap_err().contains("p_stale"));
    }
}
