//! Built-in benchmarks behind `fabricsim bench`: raw event dispatch and a
//! loaded 8x8 mesh. (Criterion benchmarks in `benches/` measure the same
//! paths with statistics.)

/// All built-in benchmarks as JSON text.
pub fn run_all(_quick: bool) -> Result<String, String> {
    Err("not yet".into())
}
