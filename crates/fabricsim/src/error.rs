use std::fmt;

/// A configuration error: which file, which key, what was wrong and what was
/// expected. `Display` gives the one line a user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<python>`, `--set`) the value came from.
    pub source: String,
    /// Dotted key path, e.g. `link[2].bandwidth`; empty for whole-file errors.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl ConfigError {
    pub fn new(source: &str, key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { source: source.to_string(), key: key.into(), message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.source, self.message)
        } else {
            write!(f, "{}: {}: {}", self.source, self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// `" did you mean \"x\"?"` for the name in `names` nearest `name`, if it
/// is a slip (within a third of its letters) or `name` begins it
/// ("skylake" for "skylake-sp"); empty otherwise.
pub fn did_you_mean_name<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let limit = (name.chars().count() / 3).max(1);
    names
        .into_iter()
        .map(|n| (edit_distance(&name.to_lowercase(), &n.to_lowercase()), n))
        .filter(|&(d, n)| d <= limit || (name.len() > 2 && n.starts_with(name)))
        .min()
        .map_or(String::new(), |(_, n)| format!(" did you mean \"{n}\"?"))
}

/// Levenshtein distance (insertions, deletions, substitutions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
pub fn or_list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    joined(&quoted, "or")
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(names: &[&str]) -> String {
    joined(names, "and")
}

fn joined<S: AsRef<str>>(items: &[S], word: &str) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.as_ref().to_string(),
        Some((last, rest)) => {
            let rest: Vec<&str> = rest.iter().map(|s| s.as_ref()).collect();
            format!("{} {word} {}", rest.join(", "), last.as_ref())
        }
    }
}
