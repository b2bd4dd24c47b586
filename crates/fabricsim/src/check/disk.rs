//! The search on disk (`[check] disk = "DIR"`): a visited set and a
//! frontier bounded by the disk rather than by memory, and checkpoints a
//! search resumes from.
//!
//! As in Murphi's disk mode (Stern and Dill, CAV 1998) and TLC's, the
//! fingerprints live in sorted files, one per shard of the visited set,
//! and only the newest ones in the in-memory table: when that table
//! outgrows its budget, each shard's keys are merged into a new sorted
//! file. A candidate the table does not know is looked up in the file
//! (a sparse index in memory names the 4 KiB block it would be in), a
//! window of candidates at a time in sorted order, so the lookups walk the
//! files forward. Breadth-first layers are written to and read back from
//! files chunk by chunk. The states, their numbers, the counts and the
//! first violation are those of the in-memory search.
//!
//! A checkpoint, at the end of a layer every `checkpoint_every` seconds
//! (and when a depth bound stops the search), merges the table into the
//! files and writes the tree, then `manifest.json` (written last and
//! renamed into place: it is the commit point). A search that is stopped
//! (Ctrl-C, or a bound) and run again with the same directory continues
//! from the last checkpoint; files newer than it are deleted. A search
//! that ends (complete, or a violation) removes its files.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::store::{Shard, Tree, SHARDS};

/// Where and how a search keeps its state on disk.
#[derive(Debug, Clone)]
pub struct DiskOptions {
    pub dir: PathBuf,
    /// What the search explores (protocol, sizes, variant): a checkpoint
    /// of anything else is refused rather than continued.
    pub identity: String,
    /// Bytes of the in-memory fingerprint table before it is merged into
    /// the sorted files.
    pub memory: u64,
    /// Seconds between checkpoints (taken at the end of a layer).
    pub checkpoint_every: f64,
}

/// Keys per block of a shard's file: the sparse index holds each block's
/// first key, so a lookup reads one block (4 KiB).
const BLOCK: usize = 512;

/// What a checkpoint records besides its files.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub identity: String,
    /// The layer to expand next, and its file.
    pub depth: u32,
    pub layer: String,
    pub layer_states: u64,
    pub layer_bytes: u64,
    pub tree: String,
    /// Generation of the visited files.
    pub generation: u64,
    pub states: u64,
    pub transitions: u64,
    pub final_states: u64,
    /// Seconds spent by the runs that led to this checkpoint.
    pub seconds: f64,
}

fn err(path: &Path, what: &str, e: io::Error) -> String {
    format!("{}: {what}: {e}", path.display())
}

fn visited_name(generation: u64, shard: usize) -> String {
    format!("visited-{generation}-{shard:02}.bin")
}

pub fn layer_name(depth: u32) -> String {
    format!("layer-{depth}.bin")
}

pub fn tree_name(depth: u32) -> String {
    format!("tree-{depth}.bin")
}

/// Files this module writes (and may delete).
fn ours(name: &str) -> bool {
    name.ends_with(".bin") && (name.starts_with("visited-") || name.starts_with("layer-") || name.starts_with("tree-"))
        || name == "manifest.json.tmp"
}

/// One shard's sorted file and its sparse index.
#[derive(Default)]
struct ShardFile {
    file: Option<File>,
    len: u64,
    /// The first key of each block.
    index: Vec<u64>,
}

impl ShardFile {
    fn open(path: &Path) -> Result<ShardFile, String> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(ShardFile::default()),
            Err(e) => return Err(err(path, "opening", e)),
        };
        let bytes = file.metadata().map_err(|e| err(path, "reading", e))?.len();
        let len = bytes / 8;
        let mut index = Vec::with_capacity(len.div_ceil(BLOCK as u64) as usize);
        let mut key = [0u8; 8];
        for b in 0..len.div_ceil(BLOCK as u64) {
            file.read_exact_at(&mut key, b * BLOCK as u64 * 8).map_err(|e| err(path, "reading", e))?;
            index.push(u64::from_le_bytes(key));
        }
        Ok(ShardFile { file: Some(file), len, index })
    }
}

/// The fingerprints that left memory: sorted files, one per shard.
pub struct DiskSet {
    dir: PathBuf,
    generation: u64,
    /// The generation a checkpoint names (its files are kept until a
    /// newer checkpoint).
    kept: u64,
    shards: Vec<ShardFile>,
    /// The block last read: (shard, block, its keys).
    block: (usize, usize, Vec<u64>),
    raw: Vec<u8>,
}

impl DiskSet {
    pub fn open(dir: &Path, generation: u64) -> Result<DiskSet, String> {
        let shards =
            (0..SHARDS).map(|s| ShardFile::open(&dir.join(visited_name(generation, s)))).collect::<Result<_, _>>()?;
        Ok(DiskSet {
            dir: dir.to_path_buf(),
            generation,
            kept: generation,
            shards,
            block: (usize::MAX, 0, Vec::new()),
            raw: Vec::new(),
        })
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn len(&self) -> u64 {
        self.shards.iter().map(|s| s.len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `key` of `shard` is in the files. Lookups in increasing
    /// order reread no block.
    pub fn contains(&mut self, shard: usize, key: u64) -> Result<bool, String> {
        let s = &self.shards[shard];
        let b = s.index.partition_point(|&k| k <= key);
        if b == 0 {
            return Ok(false);
        }
        let b = b - 1;
        if self.block.0 != shard || self.block.1 != b {
            let n = (s.len - (b * BLOCK) as u64).min(BLOCK as u64) as usize;
            self.raw.resize(n * 8, 0);
            let path = self.dir.join(visited_name(self.generation, shard));
            let file = s.file.as_ref().expect("a shard with an index has a file");
            file.read_exact_at(&mut self.raw, (b * BLOCK * 8) as u64).map_err(|e| err(&path, "reading", e))?;
            self.block.2.clear();
            self.block.2.extend(self.raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))));
            self.block.0 = shard;
            self.block.1 = b;
        }
        Ok(self.block.2.binary_search(&key).is_ok())
    }

    /// Merge every shard's in-memory keys into a new generation of files
    /// and empty the shards.
    pub fn absorb(&mut self, memory: &mut [Shard]) -> Result<(), String> {
        let next = self.generation + 1;
        let mut files = Vec::with_capacity(SHARDS);
        for (s, shard) in memory.iter_mut().enumerate() {
            let keys = shard.take_sorted();
            let path = self.dir.join(visited_name(next, s));
            merge(self.shards[s].file.as_ref(), &keys, &path)?;
            files.push(ShardFile::open(&path)?);
        }
        self.forget(self.generation);
        self.shards = files;
        self.generation = next;
        self.block.0 = usize::MAX;
        Ok(())
    }

    /// Delete generation `g`'s files unless a checkpoint names them.
    fn forget(&self, g: u64) {
        if g != self.kept {
            for s in 0..SHARDS {
                let _ = fs::remove_file(self.dir.join(visited_name(g, s)));
            }
        }
    }

    /// The current generation is a checkpoint's: keep it, and drop the
    /// previous checkpoint's.
    pub fn keep(&mut self) {
        let old = std::mem::replace(&mut self.kept, self.generation);
        if old != self.generation {
            self.forget(old);
        }
    }
}

/// Write the union of the sorted file `old` and the sorted `keys` to `path`.
fn merge(old: Option<&File>, keys: &[u64], path: &Path) -> Result<(), String> {
    let out = File::create(path).map_err(|e| err(path, "creating", e))?;
    let mut w = BufWriter::with_capacity(1 << 20, out);
    let mut put = |k: u64| w.write_all(&k.to_le_bytes());
    let mut i = 0;
    if let Some(f) = old {
        let mut r = BufReader::with_capacity(1 << 20, f);
        let mut buf = [0u8; 8];
        loop {
            match r.read_exact(&mut buf) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(err(path, "reading the previous visited file", e)),
            }
            let k = u64::from_le_bytes(buf);
            while i < keys.len() && keys[i] < k {
                put(keys[i]).map_err(|e| err(path, "writing", e))?;
                i += 1;
            }
            if i < keys.len() && keys[i] == k {
                i += 1;
            }
            put(k).map_err(|e| err(path, "writing", e))?;
        }
    }
    for &k in &keys[i..] {
        put(k).map_err(|e| err(path, "writing", e))?;
    }
    w.flush().map_err(|e| err(path, "writing", e))
}

/// A layer written chunk by chunk.
pub struct LayerWriter {
    path: PathBuf,
    w: BufWriter<File>,
    pub states: u64,
    pub bytes: u64,
}

impl LayerWriter {
    pub fn create(path: PathBuf) -> Result<LayerWriter, String> {
        let f = File::create(&path).map_err(|e| err(&path, "creating", e))?;
        Ok(LayerWriter { w: BufWriter::with_capacity(1 << 20, f), path, states: 0, bytes: 0 })
    }

    pub fn write(&mut self, first_id: u32, len: u32, bytes: &[u8]) -> Result<(), String> {
        let mut head = [0u8; 16];
        head[..4].copy_from_slice(&first_id.to_le_bytes());
        head[4..8].copy_from_slice(&len.to_le_bytes());
        head[8..].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.w.write_all(&head).and_then(|_| self.w.write_all(bytes)).map_err(|e| err(&self.path, "writing", e))?;
        self.states += len as u64;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    pub fn finish(mut self) -> Result<(), String> {
        self.w.flush().map_err(|e| err(&self.path, "writing", e))
    }
}

/// A layer read back chunk by chunk: (first state number, states, bytes).
pub struct LayerReader {
    path: PathBuf,
    r: BufReader<File>,
}

impl LayerReader {
    pub fn open(path: PathBuf) -> Result<LayerReader, String> {
        let f = File::open(&path).map_err(|e| err(&path, "opening", e))?;
        Ok(LayerReader { r: BufReader::with_capacity(1 << 20, f), path })
    }

    pub fn next_chunk(&mut self) -> Result<Option<(u32, u32, Vec<u8>)>, String> {
        let mut head = [0u8; 16];
        match self.r.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(err(&self.path, "reading", e)),
        }
        let first_id = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
        let n = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
        let mut bytes = vec![0u8; n as usize];
        self.r.read_exact(&mut bytes).map_err(|e| err(&self.path, "reading", e))?;
        Ok(Some((first_id, len, bytes)))
    }

    pub fn remove(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// The search directory: its checkpoint, if any, and its housekeeping.
pub struct Dir {
    pub opts: DiskOptions,
    /// The checkpoint's layer file (kept until the next checkpoint).
    pub kept_layer: Option<String>,
    pub kept_tree: Option<String>,
}

impl Dir {
    /// Open `opts.dir` (created if missing): the checkpoint to continue
    /// from, or None to start over (files of a search stopped before its
    /// first checkpoint are deleted).
    pub fn open(opts: &DiskOptions) -> Result<(Dir, Option<Manifest>), String> {
        let d = &opts.dir;
        fs::create_dir_all(d).map_err(|e| err(d, "creating the directory", e))?;
        let mpath = d.join("manifest.json");
        let manifest = match fs::read_to_string(&mpath) {
            Ok(t) => {
                let m: Manifest = serde_json::from_str(&t)
                    .map_err(|e| format!("{}: not a checkpoint of fabricsim check: {e}", mpath.display()))?;
                if m.identity != opts.identity {
                    return Err(format!(
                        "{} holds a checkpoint of another search ({}), not of this one ({}): \
                         use another directory, or delete it to start over",
                        d.display(),
                        m.identity,
                        opts.identity
                    ));
                }
                Some(m)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(err(&mpath, "reading", e)),
        };
        // Files newer than the checkpoint (or all of them, with none).
        let keep: Vec<String> = manifest.as_ref().map_or(Vec::new(), |m| {
            let mut k: Vec<String> = (0..SHARDS).map(|s| visited_name(m.generation, s)).collect();
            k.push(m.layer.clone());
            k.push(m.tree.clone());
            k
        });
        for e in fs::read_dir(d).map_err(|e| err(d, "listing", e))? {
            let name = e.map_err(|e| err(d, "listing", e))?.file_name().to_string_lossy().into_owned();
            if ours(&name) && !keep.contains(&name) {
                fs::remove_file(d.join(&name)).map_err(|e| err(&d.join(&name), "deleting", e))?;
            }
        }
        let dir = Dir {
            opts: opts.clone(),
            kept_layer: manifest.as_ref().map(|m| m.layer.clone()),
            kept_tree: manifest.as_ref().map(|m| m.tree.clone()),
        };
        Ok((dir, manifest))
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.opts.dir.join(name)
    }

    pub fn read_tree(&self, name: &str) -> Result<Tree, String> {
        let p = self.path(name);
        let bytes = fs::read(&p).map_err(|e| err(&p, "reading", e))?;
        Tree::from_bytes(&bytes).ok_or_else(|| format!("{}: not a search tree of fabricsim check", p.display()))
    }

    /// Commit a checkpoint: the tree, then the manifest (renamed into
    /// place); then drop the previous checkpoint's layer and tree.
    pub fn checkpoint(&mut self, m: &Manifest, tree: &Tree) -> Result<(), String> {
        let tpath = self.path(&m.tree);
        fs::write(&tpath, tree.to_bytes()).map_err(|e| err(&tpath, "writing", e))?;
        let tmp = self.path("manifest.json.tmp");
        let text = serde_json::to_string_pretty(m).expect("a manifest serializes");
        fs::write(&tmp, text).map_err(|e| err(&tmp, "writing", e))?;
        let mpath = self.path("manifest.json");
        fs::rename(&tmp, &mpath).map_err(|e| err(&mpath, "writing", e))?;
        for (old, new) in [(&mut self.kept_layer, &m.layer), (&mut self.kept_tree, &m.tree)] {
            if let Some(o) = old.replace(new.clone()) {
                if &o != new {
                    let _ = fs::remove_file(self.opts.dir.join(o));
                }
            }
        }
        Ok(())
    }

    /// Whether a layer file is the checkpoint's (and must outlive its layer).
    pub fn is_kept_layer(&self, name: &str) -> bool {
        self.kept_layer.as_deref() == Some(name)
    }

    /// A search that ended needs no checkpoint: remove its files.
    pub fn finish(self) {
        let d = &self.opts.dir;
        if let Ok(entries) = fs::read_dir(d) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if ours(&name) || name == "manifest.json" {
                    let _ = fs::remove_file(d.join(name));
                }
            }
        }
    }
}
