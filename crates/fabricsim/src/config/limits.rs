//! Resource limits checked before anything is allocated: a configuration
//! whose tables would not fit in memory is refused by validation, naming the
//! key that makes it large and the estimate, instead of aborting on
//! allocation.

use super::units::Size;

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

/// The memory a run may use: `FABRICSIM_MEMORY_LIMIT` (a size like `4GiB`)
/// if set, else the machine's physical memory (`MemTotal` of
/// `/proc/meminfo`), else 16 GiB.
pub fn memory_budget() -> Result<u64, String> {
    if let Ok(v) = std::env::var("FABRICSIM_MEMORY_LIMIT") {
        return Size::parse(v.trim())
            .map(Size::bytes)
            .map_err(|e| format!("environment variable FABRICSIM_MEMORY_LIMIT = {v:?}: {e}"));
    }
    Ok(physical_memory().unwrap_or(16 << 30))
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
    let budget = memory_budget()?;
    if bytes > budget {
        return Err(format!(
            "{what} need about {} of memory (routing tables and per-link state), more than the {} available (FABRICSIM_MEMORY_LIMIT or physical memory); \
             expected a smaller system",
            format_bytes(bytes),
            format_bytes(budget)
        ));
    }
    Ok(())
}
