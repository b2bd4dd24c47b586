//! Memory-model oracle (in progress).
