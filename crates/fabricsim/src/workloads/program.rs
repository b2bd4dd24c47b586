//! Per-thread programs of annotated memory operations (in progress).
