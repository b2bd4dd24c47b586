//! Resource limits checked before anything is allocated: a configuration
//! whose tables would not fit in memory is refused by validation, naming the
//! key that makes it large and the estimate, instead of aborting on
//! allocation.

use super::units::Size;
use crate::engine::process::status_kb;

/// `12.8 GB` style: decimal units, three significant figures.
pub fn format_bytes(b: u64) -> String {
    let units = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
    for (f, u) in units {
        if b as f64 >= f {
            return format!("{:.1} {u}", b as f64 / f);
        }
    }
    format!("{b} B")
}

/// The memory a run may use, and what sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    pub bytes: u64,
    /// The limit that decides, in words, with how to raise it.
    pub source: String,
}

/// The memory a run may really use: the least of `FABRICSIM_MEMORY_LIMIT`
/// (a size like `4GiB`), the process's address-space and data limits
/// (`ulimit -v`, `ulimit -d`: RLIMIT_AS and RLIMIT_DATA, less what the
/// process already maps), its cgroup's `memory.max` (less what the group
/// already uses: a cluster job's limit), and the machine's physical memory
/// (`MemTotal`; 16 GiB if unknown).
pub fn budget() -> Result<Budget, String> {
    let mut all: Vec<Budget> = Vec::new();
    if let Ok(v) = std::env::var("FABRICSIM_MEMORY_LIMIT") {
        let b = Size::parse(v.trim())
            .map(Size::bytes)
            .map_err(|e| format!("environment variable FABRICSIM_MEMORY_LIMIT = {v:?}: {e}"))?;
        all.push(Budget { bytes: b, source: format!("FABRICSIM_MEMORY_LIMIT = {v}") });
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    for (name, used, shell) in
        [("Max address space", "VmSize:", "ulimit -v"), ("Max data size", "VmData:", "ulimit -d")]
    {
        if let Some(limit) = soft_limit(&limits, name) {
            let in_use = status_kb(&status, used).unwrap_or(0) * 1024;
            all.push(Budget {
                bytes: limit.saturating_sub(in_use),
                source: format!(
                    "the process's limit ({shell}: {}, of which {} already in use; raise it with {shell})",
                    format_bytes(limit),
                    format_bytes(in_use)
                ),
            });
        }
    }
    if let Some((max, current, file)) = cgroup_limit() {
        all.push(Budget {
            bytes: max.saturating_sub(current),
            source: format!(
                "the cgroup's memory limit ({file}: {}, of which {} already in use; a job scheduler sets it: \
                 ask for more memory)",
                format_bytes(max),
                format_bytes(current)
            ),
        });
    }
    all.push(match physical_memory() {
        Some(b) => Budget { bytes: b, source: "the machine's physical memory".to_string() },
        None => Budget { bytes: 16 << 30, source: "16 GiB (the machine's memory is unknown)".to_string() },
    });
    Ok(all.into_iter().min_by_key(|b| b.bytes).expect("physical memory is always a candidate"))
}

/// [`budget`]'s bytes.
pub fn memory_budget() -> Result<u64, String> {
    budget().map(|b| b.bytes)
}

/// The soft limit of `/proc/self/limits`'s line `name`, in bytes (None if unlimited or absent).
fn soft_limit(limits: &str, name: &str) -> Option<u64> {
    let rest = limits.lines().find(|l| l.starts_with(name))?[name.len()..].trim_start();
    rest.split_whitespace().next()?.parse().ok()
}

/// The memory limit of this process's cgroup (v2 `memory.max`, v1
/// `memory.limit_in_bytes`) and its current use, if one is set.
fn cgroup_limit() -> Option<(u64, u64, String)> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        // The group's use counts its anonymous memory only: its page cache
        // (a build's, a search's files) is given back under pressure.
        let (max_file, stat_file, anon) = if controllers.is_empty() {
            (format!("/sys/fs/cgroup{path}/memory.max"), format!("/sys/fs/cgroup{path}/memory.stat"), "anon")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"),
                format!("/sys/fs/cgroup/memory{path}/memory.stat"),
                "total_rss",
            )
        } else {
            continue;
        };
        // "max" (v2) or a huge number (v1) means no limit
        if let Some(max) = read(&max_file).filter(|&m| m < 1 << 60) {
            let used = std::fs::read_to_string(&stat_file)
                .ok()
                .and_then(|t| {
                    t.lines().find_map(|l| l.strip_prefix(anon)?.strip_prefix(' ')?.trim().parse::<u64>().ok())
                })
                .unwrap_or(0);
            return Some((max, used, max_file));
        }
    }
    None
}

fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes per port (link direction) of a built system: the link, its
/// ports, buffers, credits, statistics and routing candidates. Measured:
/// fully connected fabrics of 512 and 1024 switches use about 620 bytes per
/// port.
pub const BYTES_PER_PORT: u64 = 600;

/// Bytes per requester: its agent, workload and four latency histograms
/// of about 7.8 kB each (two kept while running, two in the result).
pub const BYTES_PER_REQUESTER: u64 = 32_000;

/// Steps (table entries filled, routes followed) the routing build may take:
/// about ten seconds on a slow core. A system above it is refused before
/// anything is built.
pub const MAX_ROUTING_STEPS: u64 = 2_000_000_000;

/// Estimated bytes of a system with `links` links and `requesters`
/// requesters whose routing tables take `routing` bytes: the tables plus
/// the per-port and per-requester state.
pub fn system_bytes(routing: u64, links: u64, requesters: u64) -> u64 {
    routing
        .saturating_add(links.saturating_mul(2 * BYTES_PER_PORT))
        .saturating_add(requesters.saturating_mul(BYTES_PER_REQUESTER))
}

/// `Err(message)` if the routing tables of a fabric of `shape` (`links`
/// links, `flows` (source, destination) pairs) would not fit in memory or
/// would take too long to build; the message gives the estimate, what it
/// is for and the limit.
pub fn check_system(
    algorithm: crate::config::schema::RoutingAlgorithm,
    shape: &crate::fabric::routing::Shape,
    links: u64,
    requesters: u64,
    flows: u64,
    what: &str,
) -> Result<(), String> {
    let e = crate::fabric::routing::RoutingTable::estimate(algorithm, shape, flows);
    check(system_bytes(e.bytes, links, requesters), what)?;
    if e.steps > MAX_ROUTING_STEPS {
        return Err(format!(
            "{what} need about {:.1e} steps to build the routing tables and check them for deadlock \
             ({} destination groups x {} switch ports, {} flows), more than the limit of {:.0e}; \
             expected a smaller system{}",
            e.steps as f64,
            shape.groups,
            shape.switch_ports,
            flows,
            MAX_ROUTING_STEPS as f64,
            if algorithm == crate::config::schema::RoutingAlgorithm::Dor {
                ""
            } else {
                " (or routing = \"dor\" on a mesh or torus, which needs no tables)"
            }
        ));
    }
    Ok(())
}

pub fn check(bytes: u64, what: &str) -> Result<(), String> {
    let b = budget()?;
    if bytes > b.bytes {
        return Err(format!(
            "{what} need about {} of memory (routing tables and per-link state), more than the {} available \
             under {}; expected a smaller system",
            format_bytes(bytes),
            format_bytes(b.bytes),
            b.source
        ));
    }
    Ok(())
}
