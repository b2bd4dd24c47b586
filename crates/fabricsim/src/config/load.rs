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
    let config: Config = typed(table.clone(), source, "", &parsed)?;
    Ok((config, table, parsed))
}
