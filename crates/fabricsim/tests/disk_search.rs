//! The search on disk (`check::disk`): the same states, counts and
//! counterexamples as the search in memory, and a stopped search that
//! continues from its checkpoint to the same end.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fabricsim::agents::coherence::german::German;
use fabricsim::check::disk::DiskOptions;
use fabricsim::check::{explore, Options, Report, Stop};

fn disk(dir: &std::path::Path, memory: u64, checkpoint_every: f64) -> DiskOptions {
    DiskOptions { dir: dir.to_path_buf(), identity: "german 4x2".to_string(), memory, checkpoint_every }
}

fn run(g: &German, opts: Options) -> Report {
    let r = explore(g, &Options { check_deadlock: true, ..opts }, &mut |_| {});
    assert!(r.disk_error.is_none(), "{:?}", r.disk_error);
    r
}

/// A 1 MiB table (the shards' smallest) is merged into the files after
/// nearly every window, so most duplicates are found on disk.
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn a_disk_search_counts_german_4_as_the_memory_search_does() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(&German::new(4, 2), Options { disk: Some(disk(tmp.path(), 1 << 20, 1e9)), ..Options::default() });
    assert!(r.complete && r.violation.is_none(), "{}", r.trace_text());
    assert_eq!((r.states, r.transitions, r.depth), (1105434, 5922288, 35));
    assert_eq!(r.checkpoint, None, "a finished search leaves no checkpoint");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "a finished search removes its files: {left:?}");
}

/// Stopped by a depth bound, then by Ctrl-C in the middle of a layer, and
/// run again each time: the end is the uninterrupted search's.
#[test]
#[cfg_attr(debug_assertions, ignore)]
fn a_stopped_disk_search_continues_to_the_same_end() {
    let tmp = tempfile::tempdir().unwrap();
    let g = German::new(4, 2);
    let d = disk(tmp.path(), 4 << 20, 0.0);
    let first = run(&g, Options { disk: Some(d.clone()), max_depth: Some(12), ..Options::default() });
    assert!(!first.complete && first.checkpoint == Some(12), "{first:?}");
    assert!(tmp.path().join("manifest.json").exists());
    // Stop after some polls: in the middle of a later layer.
    let polls = Arc::new(AtomicUsize::new(0));
    let p = polls.clone();
    let stop = Stop::new(move || p.fetch_add(1, Ordering::Relaxed) > 150);
    let second = run(&g, Options { disk: Some(d.clone()), stop, threads: 1, ..Options::default() });
    assert!(second.interrupted && second.resumed_from == Some(12), "{second:?}");
    let kept = second.checkpoint.expect("an interrupted search keeps a checkpoint");
    assert!(kept > 12 && kept <= second.depth, "{second:?}");
    let third = run(&g, Options { disk: Some(d), ..Options::default() });
    assert_eq!(third.resumed_from, Some(kept));
    assert!(third.complete && third.violation.is_none());
    assert_eq!((third.states, third.transitions, third.depth), (1105434, 5922288, 35));
}

/// A checkpoint of one search is not continued as another.
#[test]
fn a_checkpoint_of_another_search_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let g = German::new(2, 2);
    let d = disk(tmp.path(), 1 << 20, 0.0);
    let r = run(&g, Options { disk: Some(d.clone()), max_depth: Some(3), ..Options::default() });
    assert_eq!(r.checkpoint, Some(3));
    let other = DiskOptions { identity: "german 2x3".to_string(), ..d };
    let r = explore(&g, &Options { disk: Some(other), ..Options::default() }, &mut |_| {});
    let e = r.disk_error.expect("refused");
    assert!(e.contains("another search") && e.contains("german 4x2") && e.contains("german 2x3"), "{e}");
}

/// A violation found on disk has the in-memory search's shortest trace.
#[test]
fn a_disk_search_finds_a_mutant_with_the_same_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let mutant = fabricsim::agents::coherence::german::MUTANTS[0];
    let g = German::with_mutant(3, 2, Some(mutant)).unwrap();
    let mem = run(&g, Options::default());
    let on_disk = run(&g, Options { disk: Some(disk(tmp.path(), 1 << 20, 0.0)), ..Options::default() });
    let (a, b) = (mem.violation.expect("caught"), on_disk.violation.expect("caught on disk"));
    assert_eq!((a.kind, a.steps.len(), mem.states), (b.kind, b.steps.len(), on_disk.states));
    assert!(!tmp.path().join("manifest.json").exists(), "a search that ended keeps no checkpoint");
}
