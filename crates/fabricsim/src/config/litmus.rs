//! `fabricsim litmus FILE --protocol NAME [--set KEY=VALUE] [--mutant M]
//! [--config FILE]`: the protocol's `[protocol.<name>]` table, the one
//! `fabricsim run` reads, from a configuration's `[protocol]` table and the
//! overrides (`KEY` within `[protocol.<name>]`, or a whole `protocol.` path),
//! handed to the family through the registry.

use std::sync::Arc;

use super::load::{apply_overrides, blame, parse_table, Override};
use super::{ConfigError, Format};
use crate::check::litmus_run::LitmusRun;
use crate::check::oracle::Limits;
use crate::error::or_list;
use crate::programs::{Model, Program};
use crate::registry::{self, Entry, LitmusError, RunTable};

/// A protocol ready to run litmus programs.
pub struct LitmusProtocol {
    family: &'static dyn Entry,
    table: RunTable,
    mutant: Option<String>,
    source: String,
    overrides: Vec<Override>,
    /// As the report names it: the name, the overrides and the mutant.
    pub label: String,
}

/// Why a litmus run could not finish: a refused input, or an oracle too large.
#[derive(Debug)]
pub enum LitmusFail {
    Config(ConfigError),
    Run(String),
}

/// The protocol `name` (or `config`'s `[protocol] name`: text, file
/// name and format) with its table from `config` and the `sets`, and `mutant`. A name
/// of the old dialect (`pcie-rc-opt+no-squash@nic=1`) is read as the keys
/// and mutant it stands for.
pub fn protocol(
    name: Option<&str>,
    config: Option<(&str, &str, Format)>,
    sets: &[String],
    mutant: Option<&str>,
) -> Result<LitmusProtocol, ConfigError> {
    let mut table = match config {
        Some((text, source, fmt)) => parse_table(text, source, fmt)?,
        None => toml::Table::new(),
    };
    let mut proto = match table.remove("protocol") {
        None => toml::Table::new(),
        Some(toml::Value::Table(t)) => t,
        Some(_) => {
            let source = config.map_or("", |c| c.1);
            return Err(ConfigError::new(source, "protocol", "expected a table ([protocol])"));
        }
    };
    let source = match config {
        Some((_, s, _)) => s.to_string(),
        None => format!("--protocol {}", name.unwrap_or("")),
    };
    let name = match (name, proto.get("name")) {
        (Some(n), _) => n.to_string(),
        (None, Some(toml::Value::String(n))) => n.clone(),
        (None, Some(_)) => return Err(ConfigError::new(&source, "protocol.name", "expected a string")),
        (None, None) => {
            return Err(ConfigError::new(
                "--protocol",
                "",
                "missing: give --protocol NAME, or a --config whose [protocol] table has a name",
            ))
        }
    };
    let mut mutant = mutant.map(String::from);
    let (family, mut raw) = match registry::find(&name) {
        Some(f) => {
            let raw = match proto.remove(&name) {
                None => toml::Table::new(),
                Some(toml::Value::Table(t)) => t,
                Some(_) => return Err(ConfigError::new(&source, format!("protocol.{name}"), "expected a table")),
            };
            (f, raw)
        }
        None => match registry::litmus_alias(&name) {
            Some((f, keys, m)) => {
                let keys = keys.map_err(|e| ConfigError::new("--protocol", "", format!("{name}: {e}")))?;
                if m.is_some() && mutant.is_some() {
                    return Err(ConfigError::new("--mutant", "", format!("--protocol {name} names a mutant already")));
                }
                mutant = mutant.or(m);
                (f, keys)
            }
            None => {
                let names: Vec<&str> = registry::names();
                let close = crate::error::did_you_mean_name(&name, names.iter().copied());
                let with: Vec<&str> =
                    registry::FAMILIES.iter().filter(|f| f.litmus_refusal().is_none()).map(|f| f.name()).collect();
                return Err(ConfigError::new(
                    "--protocol",
                    "",
                    format!(
                        "{name:?}: no such protocol;{close} expected {} (with cores for litmus programs)",
                        or_list(&with)
                    ),
                ));
            }
        },
    };
    let fname = family.name();
    if let Some(why) = family.litmus_refusal() {
        return Err(ConfigError::new("--protocol", "", format!("{fname:?} has no cores for litmus programs: {why}")));
    }
    let mut overrides = Vec::new();
    for s in sets {
        let full = if s.starts_with("protocol.") { s.clone() } else { format!("protocol.{fname}.{s}") };
        let mut o = Override::parse(&full).map_err(|e| ConfigError { source: format!("--set {s}"), ..e })?;
        o.text = s.clone();
        overrides.push(o);
    }
    if !overrides.is_empty() {
        let root = toml::Table::from_iter([(
            "protocol".to_string(),
            toml::Value::Table(toml::Table::from_iter([(fname.to_string(), toml::Value::Table(raw))])),
        )]);
        let mut root = apply_overrides(root, &overrides)?;
        let mut p = match root.remove("protocol") {
            Some(toml::Value::Table(t)) => t,
            _ => toml::Table::new(),
        };
        for key in p.keys() {
            if key != fname {
                return Err(blame(
                    &source,
                    &overrides,
                    format!("protocol.{key}"),
                    format!("applies to protocol {key:?} only; expected keys of [protocol.{fname}]"),
                ));
            }
        }
        raw = match p.remove(fname) {
            Some(toml::Value::Table(t)) => t,
            _ => return Err(blame(&source, &overrides, format!("protocol.{fname}"), "expected a table")),
        };
    }
    if family.has_table() {
        let keys = family.litmus_keys();
        if let Some(k) =
            raw.keys().find(|k| !keys.contains(&k.as_str()) && family.run_params().iter().any(|p| &p.key == *k))
        {
            return Err(blame(
                &source,
                &overrides,
                format!("protocol.{fname}.{k}"),
                format!(
                    "applies to the timed machine (fabricsim run), not to litmus programs; a litmus run reads {}",
                    keys.join(", ")
                ),
            ));
        }
    }
    let table = family.run_table(Some(raw), &source, &overrides)?;
    let mut label = name.clone();
    for s in sets {
        label += &format!(" {s}");
    }
    if let (Some(m), true) = (&mutant, registry::find(&name).is_some()) {
        label += &format!(" mutant={m}");
    }
    Ok(LitmusProtocol { family, table, mutant, source, overrides, label })
}

impl LitmusProtocol {
    /// Every outcome of `program` on the protocol under `model`.
    pub fn run(&self, program: Arc<Program>, model: Model, limits: &Limits) -> Result<LitmusRun, LitmusFail> {
        self.family.litmus(program, model, &self.table, self.mutant.as_deref(), limits).map_err(|e| match e {
            LitmusError::Oracle(m) => LitmusFail::Run(m),
            LitmusError::Param(p) => LitmusFail::Config(match p.key.as_str() {
                "mutant" => {
                    ConfigError::new(&format!("--mutant {}", self.mutant.as_deref().unwrap_or("")), "", p.message)
                }
                "model" => ConfigError::new("--model", "", p.message),
                "program" | "protocol" => ConfigError::new(&format!("--protocol {}", self.label), "", p.message),
                k => blame(&self.source, &self.overrides, format!("protocol.{}.{k}", self.family.name()), p.message),
            }),
        })
    }
}

/// `name` (with `sets` and `mutant`, as on the command line) on `program`
/// under `model`, without limits; errors as text.
pub fn run_with(
    program: Arc<Program>,
    model: Model,
    name: &str,
    sets: &[&str],
    mutant: Option<&str>,
) -> Result<LitmusRun, String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let p = protocol(Some(name), None, &sets, mutant).map_err(|e| e.to_string())?;
    p.run(program, model, &Limits::default()).map_err(|e| match e {
        LitmusFail::Config(e) => e.to_string(),
        LitmusFail::Run(m) => m,
    })
}

/// [`run_with`] with no keys: `name` alone, or in the old dialect.
pub fn run_on_protocol(program: Arc<Program>, model: Model, name: &str) -> Result<LitmusRun, String> {
    run_with(program, model, name, &[], None)
}
