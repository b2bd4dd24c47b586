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
