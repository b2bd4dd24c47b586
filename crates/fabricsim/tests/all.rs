//! Every integration test in one binary: one link of the crate instead of one per file (the
//! link with LTO dominated the test build). Run one file's tests with
//! `cargo test -p fabricsim --release --test all dcoh::`.

mod analytic;
mod bi_coherent;
mod bi_runtime_check;
mod cache;
mod cache_counters;
mod coherence;
mod common;
mod config_errors;
mod cord;
mod core_frontend;
mod core_levels;
mod dcoh;
mod disk_search;
mod dor;
mod dram;
mod driver_core;
mod engine_golden;
mod esf;
mod fabric_features;
mod fuzz;
mod gcs;
mod generic_timing;
mod german;
mod hardening;
mod hops;
mod invariants;
mod kernels;
mod layers;
mod litmus_gen;
mod litmus_oracle;
mod litmus_registry;
mod pack;
mod pcie;
mod posted;
mod profile;
mod protocol_timing;
mod registry;
mod spread;
mod tables;
mod tables_murphi;
mod trace_words;
