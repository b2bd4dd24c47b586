//! PyO3 bindings: the `fabricsim._core` module. Only conversion lives here;
//! validation and simulation are the core crate's (docs/core-api.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use fabricsim::{config, ConfigError, Format, Outcome};

create_exception!(
    _core,
    PyConfigError,
    PyValueError,
    "A configuration is invalid; the message names the file, key, value and what was expected."
);

fn config_err(e: ConfigError) -> PyErr {
    PyConfigError::new_err(e.to_string())
}

fn fmt(s: &str) -> PyResult<Format> {
    Format::parse(s).map_err(config_err)
}

/// Validate a configuration; return the resolved configuration as JSON text.
#[pyfunction]
#[pyo3(signature = (text, source, fmt = "toml", overrides = Vec::new()))]
fn validate(text: &str, source: &str, fmt: &str, overrides: Vec<String>) -> PyResult<(String, Vec<String>)> {
    let spec = config::resolve(text, source, self::fmt(fmt)?, &overrides, None).map_err(config_err)?;
    Ok((serde_json::to_string(&spec.resolved).expect("json"), spec.warnings))
}

/// Run a configuration. Releases the GIL while simulating; calls
/// `progress(fraction, text)` about every 100 ms and stops cleanly on Ctrl-C.
/// `profile`: the summary gets a `profile` object (events by kind, wall time by part).
#[pyfunction]
#[pyo3(signature = (text, source, fmt = "toml", overrides = Vec::new(), seed = None, progress = None, profile = false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    source: &str,
    fmt: &str,
    overrides: Vec<String>,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
    profile: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = config::resolve(text, source, self::fmt(fmt)?, &overrides, seed).map_err(config_err)?;
    let mut pending: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut last = Instant::now();
        let mut cb = |frac: f64| -> bool {
            if last.elapsed() < Duration::from_millis(100) && frac < 1.0 {
                return true;
            }
            last = Instant::now();
            Python::attach(|py| {
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (frac, format!("{:.0}%", frac * 100.0))) {
                        pending = Some(e);
                        return false;
                    }
                }
                if let Err(e) = py.check_signals() {
                    pending = Some(e);
                    return false;
                }
                true
            })
        };
        match profile {
            true => fabricsim::run_spec_profiled(&spec, &mut cb),
            false => fabricsim::run_spec(&spec, &mut cb),
        }
    });
    if let Some(e) = pending {
        return Err(e);
    }
    if result.outcome == Outcome::Interrupted {
        return Err(PyKeyboardInterrupt::new_err("simulation interrupted"));
    }
    let out = PyDict::new(py);
    out.set_item("summary", result.summary_json(fabricsim::VERSION))?;
    let tables = PyDict::new(py);
    for (name, csv) in result.tables() {
        tables.set_item(name, csv)?;
    }
    out.set_item("tables", tables)?;
    out.set_item("text", result.text())?;
    Ok(out)
}

/// Run the built-in benchmarks; return their figures as JSON text.
#[pyfunction(name = "bench")]
#[pyo3(signature = (quick = false))]
fn run_bench(py: Python<'_>, quick: bool) -> PyResult<String> {
    py.detach(|| fabricsim::bench::run_all(quick)).map_err(PyRuntimeError::new_err)
}

/// A [`fabricsim::check::Stop`] that asks Python, at most every 100 ms,
/// whether a signal (Ctrl-C) arrived. The KeyboardInterrupt is consumed
/// here: the search returns its partial report, marked interrupted.
fn python_stop() -> fabricsim::check::Stop {
    let last = std::sync::Mutex::new(Instant::now());
    fabricsim::check::Stop::new(move || {
        let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
        if l.elapsed() < Duration::from_millis(100) {
            return false;
        }
        *l = Instant::now();
        Python::attach(|py| py.check_signals().is_err())
    })
}

/// A flag that stops the searches of other threads: the main thread sets it
/// when it sees Ctrl-C (signals reach only the main thread).
#[pyclass]
struct StopToken(Arc<AtomicBool>);

#[pymethods]
impl StopToken {
    #[new]
    fn new() -> Self {
        StopToken(Arc::new(AtomicBool::new(false)))
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Litmus tests: the oracle's verdict under `model` (with `mapping`, under
/// tso, how C11 is compiled to x86: `standard` or `plain`), and with
/// `protocol` the outcomes the protocol produces, exhaustively. Returns JSON
/// text (one object); a parse error raises ConfigError naming the file,
/// line and column. `stop`, when set, stops the search (as Ctrl-C does on
/// the main thread).
///
/// The protocol is `protocol` (or `config`'s `[protocol] name`; `config`:
/// its text, file name and format) with its `[protocol.<name>]` keys from `config`
/// and `overrides` (`KEY=VALUE`, KEY within `[protocol.<name>]`), and
/// `mutant`.
#[pyfunction]
#[pyo3(signature = (text, source, model, protocol = None, mapping = "standard", stop = None, overrides = Vec::new(), mutant = None, config = None))]
#[allow(clippy::too_many_arguments)]
fn litmus(
    py: Python<'_>,
    text: &str,
    source: &str,
    model: &str,
    protocol: Option<String>,
    mapping: &str,
    stop: Option<PyRef<'_, StopToken>>,
    overrides: Vec<String>,
    mutant: Option<String>,
    config: Option<(String, String, String)>,
) -> PyResult<String> {
    use fabricsim::check::{litmus_run, oracle};
    use fabricsim::config::litmus::{protocol as litmus_protocol, LitmusFail};
    let with_protocol = protocol.is_some() || config.is_some();
    if !with_protocol && (!overrides.is_empty() || mutant.is_some()) {
        return Err(PyConfigError::new_err("--set and --mutant: apply with --protocol NAME (or --config) only"));
    }
    let config = match &config {
        Some((t, s, f)) => Some((t.as_str(), s.as_str(), self::fmt(f)?)),
        None => None,
    };
    let proto = match with_protocol {
        true => Some(
            litmus_protocol(protocol.as_deref(), config, &overrides, mutant.as_deref())
                .map_err(|e| PyConfigError::new_err(format!("{source}: {e}")))?,
        ),
        false => None,
    };
    let prog = fabricsim::programs::litmus::parse(text, source).map_err(|e| PyConfigError::new_err(e.to_string()))?;
    let m: fabricsim::programs::Model =
        model.parse().map_err(|e: String| PyConfigError::new_err(format!("--model: {e}")))?;
    let mapping: oracle::Mapping =
        mapping.parse().map_err(|e: String| PyConfigError::new_err(format!("--mapping: {e}")))?;
    let prog = std::sync::Arc::new(oracle::compile(&prog, m, mapping));
    let token = stop.map(|t| t.0.clone());
    let signals = python_stop();
    let stop = fabricsim::check::Stop::new(move || {
        token.as_ref().is_some_and(|t| t.load(Ordering::Relaxed)) || signals.requested()
    });
    let limits = oracle::Limits { stop, ..Default::default() };
    let with_mapping = |mut j: serde_json::Value| {
        if m == fabricsim::programs::Model::Tso {
            j["mapping"] = mapping.name().into();
        }
        j.to_string()
    };
    py.detach(|| match proto {
        None => match oracle::try_allowed_outcomes(&prog, m, &limits) {
            Ok(outcomes) => Ok(with_mapping(oracle::report_json_of(&prog, m, &outcomes))),
            Err(e) if e.interrupted => Ok(serde_json::json!({
                "test": prog.name, "model": m.name(), "interrupted": true, "complete": false,
                "states": e.explored,
            })
            .to_string()),
            Err(e) => Err(PyRuntimeError::new_err(format!("{source}: {}", e.message))),
        },
        Some(p) => {
            let run = p.run(prog.clone(), m, &limits).map_err(|e| match e {
                LitmusFail::Run(e) => PyRuntimeError::new_err(format!("{source}: {e}")),
                LitmusFail::Config(e) => PyConfigError::new_err(format!("{source}: {e}")),
            })?;
            Ok(with_mapping(litmus_run::run_json(&prog, m, &p.label, &run)))
        }
    })
}

/// Exhaustive check of a protocol configuration: JSON text of the report,
/// the counterexample as text, and its sequence chart (SVG) if any.
#[pyfunction]
#[pyo3(signature = (text, source, fmt = "toml", overrides = Vec::new(), progress = false))]
fn check(
    py: Python<'_>,
    text: &str,
    source: &str,
    fmt: &str,
    overrides: Vec<String>,
    progress: bool,
) -> PyResult<(String, String, Option<String>)> {
    let f = self::fmt(fmt)?;
    let stop = python_stop();
    let r = py
        .detach(|| fabricsim::config::check_file::run_with_stop(text, source, f, &overrides, stop, progress))
        .map_err(config_err)?;
    Ok((r.to_json().to_string(), r.report.trace_text(), r.svg))
}

/// A table file as a Murphi model (`fabricsim export --murphi`): the model's text.
#[pyfunction]
#[pyo3(signature = (path, caches = 2, directories = 1, values = 2, mutant = None, symmetry = false, deadlock = true))]
fn export_murphi(
    path: &str,
    caches: usize,
    directories: usize,
    values: usize,
    mutant: Option<&str>,
    symmetry: bool,
    deadlock: bool,
) -> PyResult<String> {
    use fabricsim::agents::table::{murphi, Sizes};
    let sizes = Sizes::new(caches, directories, values);
    murphi::export_file(std::path::Path::new(path), sizes, mutant, murphi::Options { symmetry, deadlock })
        .map_err(|e| PyConfigError::new_err(e.to_string()))
}

/// A stop test for the graph workload: asks Python, at most every 100 ms,
/// whether a signal (Ctrl-C) arrived, and leaves the KeyboardInterrupt
/// pending so it is raised when the call returns.
fn python_interrupted() -> impl Fn() -> bool {
    let last = std::sync::Mutex::new(Instant::now());
    move || {
        let mut l = last.lock().unwrap_or_else(|e| e.into_inner());
        if l.elapsed() < Duration::from_millis(100) {
            return false;
        }
        *l = Instant::now();
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                e.restore(py);
                true
            }
        })
    }
}

fn graph_err(py: Python<'_>, e: String) -> PyErr {
    PyErr::take(py).unwrap_or_else(|| {
        if e == "interrupted" {
            PyKeyboardInterrupt::new_err(e)
        } else {
            PyValueError::new_err(e)
        }
    })
}

/// An R-MAT graph (BI Fig 13's PageRank input), held on the Rust side.
#[pyclass(name = "RmatGraph", frozen)]
struct RmatGraph {
    graph: fabricsim::workloads::graph::Graph,
}

#[pymethods]
impl RmatGraph {
    #[new]
    #[pyo3(signature = (scale, edge_factor = 35, seed = 1))]
    fn new(py: Python<'_>, scale: u32, edge_factor: u32, seed: u64) -> PyResult<Self> {
        use fabricsim::workloads::graph::{Graph, Rmat};
        let r = Rmat { edge_factor, ..Rmat::twitter_like(scale) };
        let stop = python_interrupted();
        let graph = py.detach(|| Graph::rmat(&r, seed, &stop)).map_err(|e| graph_err(py, e))?;
        Ok(RmatGraph { graph })
    }

    #[getter]
    fn vertices(&self) -> usize {
        self.graph.vertices()
    }

    #[getter]
    fn edges(&self) -> usize {
        self.graph.edges()
    }

    /// Each vertex's out-degree (its data's read count in one gather).
    fn out_degrees(&self) -> Vec<u32> {
        self.graph.out_degree.clone()
    }

    /// PowerGraph's random vertex cut over `sockets`: JSON text of the
    /// per-socket edges, masters, mirrors, replica pairs and replication.
    #[pyo3(signature = (sockets, seed = 1))]
    fn cut(&self, py: Python<'_>, sockets: usize, seed: u64) -> PyResult<String> {
        use fabricsim::workloads::graph::VertexCut;
        let st = py
            .detach(|| VertexCut::random(&self.graph, sockets, seed).map(|c| c.stats(&self.graph)))
            .map_err(PyValueError::new_err)?;
        Ok(serde_json::json!({
            "sockets": st.sockets, "vertices": st.vertices, "edges": st.edges, "masters": st.masters,
            "mirrors": st.mirrors, "pairs": st.pairs, "edge_sources": st.edge_sources, "replication": st.replication,
            "replication_expected": st.replication_expected,
        })
        .to_string())
    }

    /// The gather's vertex reads on `socket` of the cut over `sockets`, in
    /// visiting order: (sources, their masters' sockets).
    #[pyo3(signature = (sockets, socket, seed = 1))]
    fn gather_reads(&self, py: Python<'_>, sockets: usize, socket: usize, seed: u64) -> PyResult<(Vec<u32>, Vec<u8>)> {
        use fabricsim::workloads::graph::VertexCut;
        if socket >= sockets {
            return Err(PyValueError::new_err(format!("socket {socket}: expected below sockets ({sockets})")));
        }
        let reads = py
            .detach(|| VertexCut::random(&self.graph, sockets, seed).map(|c| c.gather_reads(&self.graph, socket)))
            .map_err(PyValueError::new_err)?;
        Ok(reads.into_iter().unzip())
    }

    /// PageRank to `tolerance` on the cut over `sockets`, a remote read
    /// returning the previous iteration's value with probability `p_stale`.
    #[pyo3(signature = (sockets, p_stale = 0.0, tolerance = 1e-3, max_iterations = 500, seed = 1))]
    fn pagerank(
        &self,
        py: Python<'_>,
        sockets: usize,
        p_stale: f64,
        tolerance: f64,
        max_iterations: u32,
        seed: u64,
    ) -> PyResult<String> {
        use fabricsim::workloads::graph::{PageRank, VertexCut};
        let stop = python_interrupted();
        let pr = PageRank { tolerance, max_iterations, p_stale };
        let r = py
            .detach(|| VertexCut::random(&self.graph, sockets, seed).and_then(|c| pr.run(&self.graph, &c, seed, &stop)))
            .map_err(|e| graph_err(py, e))?;
        Ok(serde_json::json!({
            "iterations": r.iterations, "converged": r.converged, "remote_reads": r.remote_reads,
            "stale_reads": r.stale_reads, "rank_sum": r.ranks.iter().sum::<f64>(),
        })
        .to_string())
    }
}

/// Every protocol family of the registry, as JSON (`fabricsim protocols`).
#[pyfunction]
fn protocols() -> String {
    fabricsim::registry::describe().to_string()
}

/// Every named core (`[protocol.core] preset`, docs/cpu-presets.md), as JSON:
/// the experiments read a machine's core values here instead of restating them.
#[pyfunction]
fn core_presets() -> String {
    use fabricsim::agents::core::presets::{Level, PRESETS};
    let level = |l: &Level| {
        serde_json::json!({
            "size": l.size,
            "ways": l.ways,
            "latency_cycles": l.latency_cycles,
            "mshrs": l.mshrs,
        })
    };
    let all: Vec<serde_json::Value> = PRESETS
        .iter()
        .map(|p| {
            let c = &p.core;
            serde_json::json!({
                "name": p.name,
                "machine": p.machine,
                "rob": c.rob,
                "width": c.width,
                "load_queue": c.load_queue,
                "fill_buffers": c.fill_buffers,
                "store_buffer": c.store_buffer,
                "wc_buffers": c.wc_buffers,
                "cycle_ps": c.cycle,
                "l1": level(&p.l1),
                "l2": level(&p.l2),
            })
        })
        .collect();
    serde_json::Value::from(all).to_string()
}

/// The TOML of the 8x8 mesh benchmark system.
#[pyfunction]
fn bench_config() -> &'static str {
    fabricsim::bench::MESH_8X8
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", fabricsim::VERSION)?;
    m.add("ConfigError", m.py().get_type::<PyConfigError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(bench_config, m)?)?;
    m.add_function(wrap_pyfunction!(litmus, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(export_murphi, m)?)?;
    m.add_function(wrap_pyfunction!(protocols, m)?)?;
    m.add_function(wrap_pyfunction!(core_presets, m)?)?;
    m.add_class::<RmatGraph>()?;
    m.add_class::<StopToken>()?;
    Ok(())
}
