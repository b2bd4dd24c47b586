//! Reading input: text (TOML or JSON) to a table, `--set` overrides
//! applied to the table, then typed deserialization that names the key
//! path of any error. Below every layer that reads a table of its own (a
//! protocol family's parameters, a system, a `[check]` file).

use serde::de::DeserializeOwned;

use crate::error::{edit_distance, ConfigError};

/// The text format of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

impl Format {
    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        match s {
            "toml" => Ok(Format::Toml),
            "json" => Ok(Format::Json),
            _ => Err(ConfigError::new("<api>", "fmt", format!("unknown format {s:?}; expected \"toml\" or \"json\""))),
        }
    }
}

/// Parse configuration text into a raw table (no schema applied yet).
pub fn parse_table(text: &str, source: &str, fmt: Format) -> Result<toml::Table, ConfigError> {
    match fmt {
        Format::Toml => text.parse::<toml::Table>().map_err(|e| {
            let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
            let msg = e.message().trim().to_string();
            ConfigError::new(&format!("{source}:{line}:{col}"), "", format!("TOML syntax error: {msg}"))
        }),
        Format::Json => serde_json::from_str::<toml::Table>(text).map_err(|e| {
            ConfigError::new(
                &format!("{source}:{}:{}", e.line(), e.column()),
                "",
                format!("JSON error: {e} (null is not a valid configuration value)"),
            )
        }),
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
    (line, col)
}

/// One `--set key=value` override, parsed.
#[derive(Debug, Clone)]
pub struct Override {
    pub text: String,
    path: Vec<PathPart>,
    value: toml::Value,
}

#[derive(Debug, Clone)]
enum PathPart {
    Key(String),
    Index(usize),
}

impl Override {
    /// `key.path[0].x=value`; the value is a TOML value (`16`, `true`,
    /// `"s"`), and anything that is not one is taken as a bare string so
    /// `bandwidth=64GB/s` works without quotes.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let err = |m: String| ConfigError::new(&format!("--set {text}"), "", m);
        let (key, value) =
            text.split_once('=').ok_or_else(|| err("expected KEY=VALUE, e.g. workload.window=32".into()))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(err("empty key; expected KEY=VALUE".into()));
        }
        let mut path = Vec::new();
        for part in key.split('.') {
            let (name, rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if name.is_empty() && rest.is_empty() {
                return Err(err(format!("empty component in key {key:?}")));
            }
            if !name.is_empty() {
                if let Ok(i) = name.parse::<usize>() {
                    path.push(PathPart::Index(i));
                } else {
                    path.push(PathPart::Key(name.to_string()));
                }
            }
            let mut rest = rest;
            while !rest.is_empty() {
                let close = rest
                    .find(']')
                    .filter(|_| rest.starts_with('['))
                    .ok_or_else(|| err(format!("bad index in key {key:?}; expected name[N]")))?;
                let idx: usize = rest[1..close]
                    .parse()
                    .map_err(|_| err(format!("bad index {:?} in key {key:?}", &rest[1..close])))?;
                path.push(PathPart::Index(idx));
                rest = &rest[close + 1..];
            }
        }
        let raw = value.trim();
        let value = match format!("v = {raw}").parse::<toml::Table>() {
            Ok(mut t) => t.remove("v").expect("key v present"),
            Err(_) => toml::Value::String(raw.to_string()),
        };
        Ok(Self { text: text.to_string(), path, value })
    }

    /// The dotted key, as error paths print it.
    pub fn key(&self) -> String {
        render_path(&self.path)
    }
}

fn render_path(parts: &[PathPart]) -> String {
    let mut s = String::new();
    for p in parts {
        match p {
            PathPart::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathPart::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Apply overrides in order to a raw table.
pub fn apply_overrides(table: toml::Table, overrides: &[Override]) -> Result<toml::Table, ConfigError> {
    let mut root = toml::Value::Table(table);
    for o in overrides {
        // Walk with the root held in a Value so tables and arrays are handled alike.
        let mut wrapper = toml::Table::new();
        wrapper.insert("root".into(), std::mem::replace(&mut root, toml::Value::Boolean(false)));
        let mut shifted = o.clone();
        shifted.path.insert(0, PathPart::Key("root".into()));
        let res = shifted.apply_in(&mut wrapper);
        root = wrapper.remove("root").expect("root kept");
        res?;
    }
    match root {
        toml::Value::Table(t) => Ok(t),
        _ => unreachable!("root stays a table"),
    }
}

impl Override {
    fn apply_in(&self, wrapper: &mut toml::Table) -> Result<(), ConfigError> {
        let source = format!("--set {}", self.text);
        let err = |key: String, m: String| ConfigError::new(&source, key, m);
        let PathPart::Key(first) = &self.path[0] else { unreachable!() };
        let mut cur: &mut toml::Value = wrapper.get_mut(first).expect("root present");
        let n = self.path.len();
        for (i, part) in self.path.iter().enumerate().skip(1) {
            let last = i + 1 == n;
            let shown = || render_path(&self.path[1..i]);
            match part {
                PathPart::Key(k) => {
                    let where_ = shown();
                    let t = cur.as_table_mut().ok_or_else(|| err(where_, "is not a table".into()))?;
                    if last {
                        t.insert(k.clone(), self.value.clone());
                        return Ok(());
                    }
                    cur = t.entry(k.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                }
                PathPart::Index(idx) => {
                    let what = shown();
                    let a = cur
                        .as_array_mut()
                        .ok_or_else(|| err(what.clone(), format!("is not a list, so it has no [{idx}]")))?;
                    let len = a.len();
                    let slot = a
                        .get_mut(*idx)
                        .ok_or_else(|| err(what.clone(), format!("has {len} entries; index {idx} is out of range")))?;
                    if last {
                        *slot = self.value.clone();
                        return Ok(());
                    }
                    cur = slot;
                }
            }
        }
        Ok(())
    }
}

/// Deserialize a raw table into a typed structure; an error names the key
/// path (with `prefix` before it) and, if the key came from an override,
/// names the override instead of the file.
pub fn typed<T: DeserializeOwned>(
    table: toml::Table,
    source: &str,
    prefix: &str,
    overrides: &[Override],
) -> Result<T, ConfigError> {
    let value = toml::Value::Table(table);
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let mut path = e.path().to_string();
        if path == "." {
            path.clear();
        }
        let mut msg = e.inner().to_string();
        // Keep the first line: later lines repeat the location we print ourselves.
        if let Some(i) = msg.find('\n') {
            msg.truncate(i);
        }
        let ends_with = |path: &str, field: &str| path == field || path.ends_with(&format!(".{field}"));
        // serde reports an unknown key at its parent; name the key itself.
        if let Some(rest) = msg.strip_prefix("unknown field `") {
            if let Some((field, expected)) = rest.split_once('`') {
                if !ends_with(&path, field) {
                    path = if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
                }
                msg = match did_you_mean(field, expected) {
                    Some(best) => {
                        format!("unknown key; did you mean `{best}`? ({})", expected.trim_start_matches(", "))
                    }
                    None => format!("unknown key{expected}"),
                };
            }
        }
        if let Some(rest) = msg.strip_prefix("missing field `") {
            if let Some((field, _)) = rest.split_once('`') {
                if !ends_with(&path, field) {
                    path = if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
                }
                msg = "missing required key".to_string();
            }
        }
        // An integer too large for TOML arrives as a string of digits: say it is out of range.
        if let Some(rest) = msg.strip_prefix("invalid type: string \"") {
            if let Some((digits, expected)) = rest.split_once("\", expected ") {
                let ty = expected.trim_end_matches('.');
                let max = uint_max(ty);
                // A digit string within range was typed as a string (a quoted
                // number); beyond it, an integer too large for TOML.
                let too_large = digits.parse::<u128>().map_or(true, |v| max.is_some_and(|(_, m)| v > m));
                if let (Some((max, _)), true, true) =
                    (max, !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()), too_large)
                {
                    msg = format!("{digits}: out of range; expected an integer from 0 to {max}");
                }
            }
        }
        if msg.starts_with("invalid type: ") || msg.starts_with("invalid value: ") {
            msg = plain_type_error(&msg).unwrap_or(msg);
        }
        let full = match (prefix.is_empty(), path.is_empty()) {
            (true, _) => path,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}.{path}"),
        };
        blame(source, overrides, full, msg)
    })
}

/// The key of serde's ", expected one of `a`, `b`" list closest to `field`
/// in edit distance, if close enough to be a slip (a third of its letters).
fn did_you_mean<'a>(field: &str, expected: &'a str) -> Option<&'a str> {
    let names = expected.split('`').skip(1).step_by(2);
    let limit = (field.chars().count() / 3).max(1);
    names
        .map(|n| (edit_distance(&field.to_lowercase(), &n.to_lowercase()), n))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// An unsigned Rust type's largest value, as written in messages and as a number.
fn uint_max(ty: &str) -> Option<(&'static str, u128)> {
    match ty {
        "u8" => Some(("2^8-1", u8::MAX as u128)),
        "u16" => Some(("2^16-1", u16::MAX as u128)),
        "u32" => Some(("2^32-1", u32::MAX as u128)),
        "u64" | "usize" => Some(("2^64-1", u64::MAX as u128)),
        _ => None,
    }
}

/// serde's "invalid type: string \"64\", expected u32" in plain words:
/// "expected an integer, got the string \"64\"".
fn plain_type_error(msg: &str) -> Option<String> {
    let (kind, rest) = msg.split_once(": ")?;
    let (got, expected) = rest.rsplit_once(", expected ")?;
    let expected = expected.trim_end_matches('.');
    let want = match (uint_max(expected), expected) {
        (Some((max, _)), _) => format!("an integer from 0 to {max}"),
        (None, "i8" | "i16" | "i32" | "i64" | "isize") => "an integer".to_string(),
        (None, "f32" | "f64") => "a number".to_string(),
        (None, "a boolean") => "true or false".to_string(),
        (None, other) => other.to_string(),
    };
    let got = if let Some(v) = got.strip_prefix("string ") {
        format!("the string {v}")
    } else if let Some(v) = got.strip_prefix("integer ") {
        format!("the integer {}", v.trim_matches('`'))
    } else if let Some(v) = got.strip_prefix("floating point ") {
        format!("the number {}", v.trim_matches('`'))
    } else if let Some(v) = got.strip_prefix("boolean ") {
        v.trim_matches('`').to_string()
    } else {
        got.to_string()
    };
    Some(if kind == "invalid value" {
        format!("{got}: expected {want}")
    } else {
        format!("expected {want}, got {got}")
    })
}

/// An error at `key`: it names the `--set` override that wrote the key (or
/// a key above or below it, or a sibling in the same list entry, like
/// `link[0].a` for an error at `link[0].b`) if there is one, else `source`.
pub fn blame(source: &str, overrides: &[Override], key: impl Into<String>, msg: impl Into<String>) -> ConfigError {
    let key = key.into();
    match blamed(overrides, &key) {
        Some(o) => ConfigError::new(&format!("--set {}", o.text), key, msg),
        None => ConfigError::new(source, key, msg),
    }
}

fn blamed<'a>(overrides: &'a [Override], key: &str) -> Option<&'a Override> {
    let below = |a: &str, b: &str| a.starts_with(&format!("{b}.")) || a.starts_with(&format!("{b}["));
    let parent = |k: &str| k.rfind('.').map(|i| k[..i].to_string());
    let exact = overrides.iter().rev().find(|o| o.key() == key);
    let nested = || overrides.iter().rev().find(|o| below(key, &o.key()) || below(&o.key(), key));
    let sibling = || {
        let p = parent(key).filter(|p| p.ends_with(']'))?;
        overrides.iter().rev().find(|o| parent(&o.key()).as_deref() == Some(p.as_str()))
    };
    exact.or_else(nested).or_else(sibling)
}

/// One parameter, as `fabricsim protocols` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub key: String,
    /// The JSON-schema type ("integer", "boolean", "string", "array"...).
    pub kind: String,
    /// The default, as TOML would write it (empty: none).
    pub default: String,
    pub doc: String,
}

impl Param {
    /// As the listing's JSON gives it.
    pub fn json(self) -> serde_json::Value {
        serde_json::json!({"key": self.key, "type": self.kind, "default": self.default, "doc": self.doc})
    }
}

/// The parameters a struct's JSON schema describes, in declaration order.
pub fn params_of(schema: &serde_json::Value) -> Vec<Param> {
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else { return Vec::new() };
    props
        .iter()
        .map(|(key, p)| {
            let kind = match p.get("type") {
                Some(serde_json::Value::String(s)) => s.clone(),
                // Option<T>: ["T", "null"]
                Some(serde_json::Value::Array(a)) => {
                    a.iter().filter_map(|t| t.as_str()).filter(|t| *t != "null").collect::<Vec<_>>().join(" or ")
                }
                // a nested table (Option<T>: anyOf [T, null]), or a type of its own
                _ if p.get("$ref").is_some() || p.get("anyOf").is_some() => "table".to_string(),
                _ => String::new(),
            };
            let default = match p.get("default") {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(v) => v.to_string(),
            };
            let doc = p.get("description").and_then(|d| d.as_str()).unwrap_or("").replace('\n', " ");
            Param { key: key.clone(), kind, default, doc }
        })
        .collect()
}
