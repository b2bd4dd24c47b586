//! Reading a system configuration: the generic reader (`crate::input`)
//! typed into [`Config`].

pub use crate::input::*;

use super::schema::Config;
use super::ConfigError;

/// Parse, override and type-check a whole configuration.
pub fn load_config(
    text: &str,
    source: &str,
    fmt: Format,
    overrides: &[String],
) -> Result<(Config, toml::Table, Vec<Override>), ConfigError> {
    let table = parse_table(text, source, fmt)?;
    let parsed: Vec<Override> = overrides.iter().map(|o| Override::parse(o)).collect::<Result<_, _>>()?;
    let table = apply_overrides(table, &parsed)?;
    if let Some(w) = table.get("workload").and_then(|w| w.as_table()) {
        moved_kernel_keys(w, "workload").map_err(|(key, msg)| blame(source, &parsed, key, msg))?;
    }
    let config: Config = typed(without_family_tables(table.clone()), source, "", &parsed)?;
    Ok((config, table, parsed))
}

/// The table without `[protocol.<family>]` and `[workload.<kernel>]`:
/// each family and each kernel reads its own (through its registry), the
/// configuration's schema has the rest.
fn without_family_tables(mut table: toml::Table) -> toml::Table {
    if let Some(toml::Value::Table(p)) = table.get_mut("protocol") {
        p.retain(|k, _| crate::registry::find(k).is_none());
    }
    if let Some(toml::Value::Table(w)) = table.get_mut("workload") {
        kernel_tables(w);
    }
    table
}

/// A kernel's key given in a workload table itself (where it was before
/// kernels read their own tables): the key and an error naming its new place.
pub fn moved_kernel_keys(t: &toml::Table, prefix: &str) -> Result<(), (String, String)> {
    use crate::workloads::kernels::owners;
    let pattern = t.get("pattern").and_then(|v| v.as_str()).unwrap_or("");
    for key in t.keys() {
        let owners: Vec<&str> = owners(key).collect();
        let Some(first) = owners.first() else { continue };
        let owner = owners.iter().find(|n| **n == pattern).unwrap_or(first);
        return Err((
            format!("{prefix}.{key}"),
            format!("moved to [workload.{owner}]: give it as {prefix}.{owner}.{key}"),
        ));
    }
    Ok(())
}

/// Take a workload table's kernel tables (`[workload.<pattern>]`) out of
/// it: each kernel reads its own, the schema has the rest.
pub fn kernel_tables(t: &mut toml::Table) -> Vec<(String, toml::Table)> {
    let names: Vec<String> = t
        .iter()
        .filter(|(k, v)| v.is_table() && crate::workloads::kernels::find(k).is_some())
        .map(|(k, _)| k.clone())
        .collect();
    names
        .into_iter()
        .map(|n| {
            let v = t.remove(&n).expect("listed");
            (n, v.try_into().expect("a table"))
        })
        .collect()
}
