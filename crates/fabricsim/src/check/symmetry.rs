//! Symmetry reduction: the canonical fingerprint of a state's orbit.
//!
//! A protocol declares its scalarsets once ([`Protocol::scalarsets`]):
//! sets of identities (caches, data values, addresses) that it treats
//! alike. Two states that differ by a renaming of those identities are in
//! the same orbit and have the same future up to that renaming, so the
//! checker stores one per orbit (Ip and Dill's scalarsets). The orbit's
//! fingerprint is the smallest fingerprint over a set of candidate
//! renamings of the state that depends only on the orbit, so it is exact:
//! two states get the same fingerprint exactly when they are in the same
//! orbit (up to hash collisions).
//!
//! Candidates. Trying every renaming costs `n!` per state for `n` caches.
//! Instead, as CMurphi and Rumur normalise, a keyed scalarset is sorted by
//! a key of each element's own state ([`Protocol::element_keys`], which
//! must not depend on the names of keyed elements), and only elements with
//! equal keys are permuted among themselves; when the set is `complete`
//! (equal keys mean interchangeable elements) one order is enough, so the
//! canonical form costs one sort. Unkeyed scalarsets (a few data values or
//! addresses) have every permutation tried, and the keys are computed for
//! each of those renamings.
//!
//! Why the candidate set depends only on the orbit: for a state `s` and a
//! renaming `h = (hu, hk)` (unkeyed part, keyed part; the two commute), the
//! candidates of `h s` are `τ' σ' h s` over all unkeyed `σ'` (so `σ' hu`
//! ranges over all unkeyed renamings `σ`) and the keyed `τ'` that sort the
//! keys of `σ h s = hk σ s`, which are the keys of `σ s` moved by `hk`, so
//! `τ' = τ hk⁻¹` for the `τ` that sort `σ s`: the same set of renamed
//! states `τ σ s`.

use super::fingerprint::fingerprint;
use super::world::World;
use crate::agents::protocol::{Protocol, Renaming, Scalarset, MAX_SCALARSET, MAX_SCALARSETS};

/// How states are reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Sort keyed scalarsets by key, permute only ties (the default).
    Sorted,
    /// Try every renaming of every scalarset (a reference for tests).
    Exhaustive,
}

/// A canonicaliser for one protocol: its scalarsets, the renamings of the
/// unkeyed ones, and scratch space (one per thread).
pub struct Canon<P: Protocol> {
    sets: Vec<Scalarset>,
    /// Every combination of permutations of the unkeyed scalarsets
    /// (identity on the keyed ones); the identity first.
    outer: Vec<Renaming>,
    /// Indices of the keyed scalarsets.
    keyed: Vec<usize>,
    scratch: Option<World<P>>,
    keys: Vec<u64>,
    /// Per keyed set: its elements in sorted order, and the tie cells
    /// (start, end) in that order that must be permuted.
    order: Vec<Vec<u8>>,
    cells: Vec<Vec<(usize, usize)>>,
    /// Per unkeyed renaming: its signature, and the keys of each keyed
    /// set's elements it was made of (`keyed_size` a renaming).
    sigs: Vec<u64>,
    sig_keys: Vec<u64>,
    keyed_size: usize,
}

impl<P: Protocol> Canon<P> {
    pub fn new(p: &P, mode: Mode) -> Self {
        let mut sets = p.scalarsets();
        assert!(sets.len() <= MAX_SCALARSETS, "at most {MAX_SCALARSETS} scalarsets");
        for s in &mut sets {
            assert!(s.size <= MAX_SCALARSET, "scalarset {} has more than {MAX_SCALARSET} elements", s.name);
            if mode == Mode::Exhaustive {
                s.keyed = false;
            }
        }
        let keyed: Vec<usize> = (0..sets.len()).filter(|&i| sets[i].keyed && sets[i].size > 1).collect();
        let mut outer = vec![Renaming::default()];
        for (i, s) in sets.iter().enumerate() {
            if keyed.contains(&i) || s.size < 2 {
                continue;
            }
            let perms = permutations(s.size);
            let mut next = Vec::with_capacity(outer.len() * perms.len());
            for r in &outer {
                for perm in &perms {
                    let mut r = r.clone();
                    for (x, &y) in perm.iter().enumerate() {
                        r.set(i, x as u8, y);
                    }
                    next.push(r);
                }
            }
            outer = next;
        }
        let keyed_size = keyed.iter().map(|&i| sets[i].size).sum();
        Canon {
            order: vec![Vec::new(); keyed.len()],
            cells: vec![Vec::new(); keyed.len()],
            sets,
            outer,
            keyed,
            scratch: None,
            keys: Vec::new(),
            sigs: Vec::new(),
            sig_keys: Vec::new(),
            keyed_size,
        }
    }

    /// Whether the protocol has any symmetry.
    pub fn active(&self) -> bool {
        self.outer.len() > 1 || !self.keyed.is_empty()
    }

    /// The fingerprint of `w`'s orbit (of `w` itself without symmetry).
    pub fn fingerprint(&mut self, p: &P, w: &World<P>) -> u128 {
        if !self.active() {
            return fingerprint(w);
        }
        let scratch = self.scratch.get_or_insert_with(|| w.clone());
        // The signature of each unkeyed renaming sigma: a hash of the
        // sorted keys of the state renamed by sigma, which no keyed renaming
        // changes. Only the renamings with the smallest signature are
        // candidates (for a renamed state the same ones are, renamed), so
        // most states are renamed and hashed once, not once per sigma.
        let mut best = u128::MAX;
        let mut min_sig = u64::MAX;
        let signed = self.outer.len() > 1 && !self.keyed.is_empty();
        if signed {
            self.sigs.clear();
            self.sig_keys.clear();
            for sigma in &self.outer {
                let mut h = super::fingerprint::Fingerprinter::default();
                for &set in &self.keyed {
                    // Kept (unsorted) for the candidates below.
                    let at = self.sig_keys.len();
                    self.sig_keys.resize(at + self.sets[set].size, 0);
                    p.element_keys(set, sigma, &w.agents, &w.ghost, &w.mail, &mut self.sig_keys[at..]);
                    self.keys.clear();
                    self.keys.extend_from_slice(&self.sig_keys[at..]);
                    self.keys.sort_unstable();
                    std::hash::Hash::hash(&self.keys[..], &mut h);
                }
                let sig = std::hash::Hasher::finish(&h);
                min_sig = min_sig.min(sig);
                self.sigs.push(sig);
            }
        }
        for (si, sigma) in self.outer.iter().enumerate() {
            if min_sig != u64::MAX && self.sigs[si] != min_sig {
                continue;
            }
            let mut r = sigma.clone();
            // Sort each keyed set by its keys in the state renamed by sigma.
            let mut at = si * self.keyed_size;
            for (k, &set) in self.keyed.iter().enumerate() {
                let n = self.sets[set].size;
                self.keys.clear();
                if signed {
                    self.keys.extend_from_slice(&self.sig_keys[at..at + n]);
                    at += n;
                } else {
                    self.keys.resize(n, 0);
                    p.element_keys(set, sigma, &w.agents, &w.ghost, &w.mail, &mut self.keys);
                }
                let order = &mut self.order[k];
                order.clear();
                order.extend(0..n as u8);
                let keys = &self.keys;
                order.sort_unstable_by_key(|&e| (keys[e as usize], e));
                let cells = &mut self.cells[k];
                cells.clear();
                if !self.sets[set].complete {
                    let mut start = 0;
                    for i in 1..=n {
                        if i == n || keys[order[i] as usize] != keys[order[start] as usize] {
                            if i - start > 1 {
                                cells.push((start, i));
                            }
                            start = i;
                        }
                    }
                }
            }
            // Every order of the tie cells (an odometer of permutations).
            loop {
                for (k, &set) in self.keyed.iter().enumerate() {
                    for (pos, &e) in self.order[k].iter().enumerate() {
                        r.set(set, e, pos as u8);
                    }
                }
                scratch.ghost.clone_from(&w.ghost);
                scratch.mail.clone_from(&w.mail);
                p.rename(&r, &w.agents, &mut scratch.agents, &mut scratch.ghost, &mut scratch.mail);
                scratch.sort_mail(p);
                best = best.min(fingerprint(scratch));
                let mut advanced = false;
                'odometer: for k in 0..self.keyed.len() {
                    for &(a, b) in &self.cells[k] {
                        if next_permutation(&mut self.order[k][a..b]) {
                            advanced = true;
                            break 'odometer;
                        }
                        // wrapped around to sorted: carry into the next cell
                    }
                }
                if !advanced {
                    break;
                }
            }
        }
        best
    }
}

/// All permutations of `0..n` (for small unkeyed scalarsets).
fn permutations(n: usize) -> Vec<Vec<u8>> {
    let mut p: Vec<u8> = (0..n as u8).collect();
    let mut out = vec![p.clone()];
    while next_permutation(&mut p) {
        out.push(p.clone());
    }
    out
}

/// The next permutation in lexicographic order; false (and the slice
/// sorted again) after the last.
fn next_permutation(v: &mut [u8]) -> bool {
    if v.len() < 2 {
        return false;
    }
    let mut i = v.len() - 1;
    while i > 0 && v[i - 1] >= v[i] {
        i -= 1;
    }
    if i == 0 {
        v.reverse();
        return false;
    }
    let mut j = v.len() - 1;
    while v[j] <= v[i - 1] {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_all_there() {
        assert_eq!(permutations(1).len(), 1);
        assert_eq!(permutations(4).len(), 24);
        let mut v = vec![0, 1, 2];
        let mut n = 1;
        while next_permutation(&mut v) {
            n += 1;
        }
        assert_eq!((n, v), (6, vec![0, 1, 2]));
    }
}
