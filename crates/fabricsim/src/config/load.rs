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
    let config: Config = typed(without_family_tables(table.clone()), source, "", &parsed)?;
    Ok((config, table, parsed))
}

/// The table without `[protocol.<family>]`: each family reads its own
/// (through the registry), the configuration's schema has the rest.
fn without_family_tables(mut table: toml::Table) -> toml::Table {
    if let Some(toml::Value::Table(p)) = table.get_mut("protocol") {
        p.retain(|k, _| crate::registry::find(k).is_none());
    }
    table
}
