//! Criterion benchmarks: raw event dispatch and packet hops on the 8x8 mesh.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn dispatch(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(1_000_000));
    g.bench_function("dispatch_1M_events_1024_pending", |b| {
        b.iter(|| fabricsim::bench::engine_dispatch(1_000_000, 1024))
    });
    g.finish();
}

fn mesh(c: &mut Criterion) {
    let probe = fabricsim::bench::mesh(100);
    let mut g = c.benchmark_group("fabric");
    g.sample_size(10);
    g.throughput(Throughput::Elements(probe.packet_hops));
    g.bench_function("mesh_8x8_uniform_packet_hops", |b| b.iter(|| fabricsim::bench::mesh(100)));
    g.finish();
}

criterion_group!(benches, dispatch, mesh);
criterion_main!(benches);
