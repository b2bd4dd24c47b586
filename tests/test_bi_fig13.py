"""BI Fig 13's count model (experiments/bi/gas_model.py) on hand-made cuts, where every term is known."""

import pytest

from fabricsim.experiments.bi import gas_model as gm

M = gm.Machine(local=100.0, same=150.0, cross=400.0, flush=5.0, coherent_same=300.0, coherent_cross=450.0)
SW = gm.Software(edge=20.0, record=100.0, mlp=4.0)


def cut(edges, mirrors, pairs, edge_sources, replication=2.0, vertices=None):
    p = len(edges)
    return {
        "sockets": p,
        "vertices": vertices or gm.TWITTER_V,
        "edges": edges,
        "masters": [0] * p,
        "mirrors": mirrors,
        "pairs": pairs,
        "edge_sources": edge_sources,
        "replication": replication,
    }


def two_sockets():
    e = gm.TWITTER_E // 2
    return cut([e, e], [1000, 1000], [[0, 1000], [1000, 0]], [[e // 2, e - e // 2], [e - e // 2, e // 2]])


def test_stock_iteration_is_gather_plus_records():
    c = two_sockets()
    it = gm.iteration(c, 0.5, M, SW, "stock")
    e = c["edges"][0] * gm.TWITTER_E / sum(c["edges"])
    assert it.gather_ns == pytest.approx(e * (20 + 0.5 * 100 / 4) / gm.CORES)
    records = 2 * (1000 + 1000)
    transfer = 2000 * gm.RECORD_BYTES / gm.LINE * 450 / 4  # a dirty hit across the enclosures
    assert it.exchange_ns == pytest.approx((records * 100 + transfer) / gm.CORES)
    assert it.flush_ns == 0 and it.ns == pytest.approx(it.gather_ns + it.exchange_ns)


def test_bi_on_demand_reads_masters_remotely_and_flushes_on_one_core():
    c = two_sockets()
    it = gm.iteration(c, 0.5, M, SW, "bi-on-demand")
    e = c["edges"][0] * gm.TWITTER_E / sum(c["edges"])
    lv = (100 + 400) / 2  # half the sources mastered here, half in the other enclosure
    assert it.gather_ns == pytest.approx(e * (20 + 0.5 * lv / 4) / gm.CORES)
    assert it.exchange_ns == pytest.approx(1000 * 400 / 4 / gm.CORES)
    assert it.flush_ns == pytest.approx(2000 * 5.0)  # not divided by the cores: one core flushes
    assert it.ns == pytest.approx(it.gather_ns + it.exchange_ns + it.flush_ns)


def test_bi_periodic_overlaps_its_flusher_and_goes_stale_with_a_long_gather():
    c = two_sockets()
    it = gm.iteration(c, 0.5, M, SW, "bi-periodic")
    work = (it.gather_ns + it.exchange_ns) * gm.CORES / (gm.CORES - 1)
    assert it.flush_ns == pytest.approx(gm.TWITTER_V * 3 * 5.0)  # every vertex and every replica's field
    assert it.ns == pytest.approx(max(work, it.flush_ns))
    assert it.p_stale == pytest.approx(0.5 * gm.PERIOD_NS / (2 * it.gather_ns))
    relevant = gm.iteration(c, 0.5, M, gm.Software(edge=20.0, record=100.0, periodic_flush="relevant"), "bi-periodic")
    assert relevant.flush_ns == pytest.approx(2000 * 5.0)
    assert gm.iteration(c, 0.5, M, gm.Software(staleness=False), "bi-periodic").p_stale == 0


def test_one_socket_has_nothing_to_exchange():
    e = gm.TWITTER_E
    c = cut([e], [0], [[0]], [[e]], replication=1.0)
    stock = gm.iteration(c, 0.3, M, SW, "stock")
    od = gm.iteration(c, 0.3, M, SW, "bi-on-demand")
    assert stock.exchange_ns == 0 and od.exchange_ns == 0 and od.flush_ns == 0
    assert stock.ns == pytest.approx(od.ns)


def test_latency_classes_follow_the_enclosures():
    assert M.latency(0, 0, 8) == 100
    assert M.latency(0, 3, 8) == 150 and M.latency(4, 7, 8) == 150
    assert M.latency(0, 4, 8) == 400 and M.latency(0, 1, 2) == 400
    assert M.dirty_hit(0, 1, 8) == 300 and M.dirty_hit(0, 4, 8) == 450 and M.dirty_hit(2, 2, 8) == 100


def test_che_approximation_analytic_cases():
    import numpy as np

    uniform = np.full(100, 0.01)
    # LRU under uniform references: a cache of k of n items misses 1 − k/n
    assert gm.lru_miss_share(uniform, 25) == pytest.approx(0.75, abs=0.01)
    assert gm.lru_miss_share(uniform, 100) == 0.0
    skewed = np.array([0.5] + [0.5 / 99] * 99)
    assert gm.lru_miss_share(skewed, 10) < gm.lru_miss_share(uniform, 10)


def test_count_model_gather_matches_an_event_level_gather(tmp_path):
    """Socket 0's gather reads of a 4-socket cut, replayed on the event-level machine with its L3 scaled to
    the same share of the graph's vertices as the paper's L3 of Twitter's: the mean read time agrees with
    the count model's (1 − μ) × L3 hit + μ × memory latency, for stock (local replicas) and for BI (the
    masters' memories), within 15%."""
    import json

    import fabricsim
    from fabricsim.experiments.bi import system

    scale, p, seed = 14, 4, 1
    g = gm.graph(scale, seed)
    c = json.loads(g.cut(p, seed=seed))
    sources, masters = g.gather_reads(p, 0, seed=seed)
    l3_lines = 11 * 16  # 11 ways of 16 sets: about 1.3 % of the graph's vertices (Twitter's L3 share: 1.5 %)
    caches = {"l1_size": "1KiB", "l1_ways": 8, "l2_size": "4KiB", "l2_ways": 16, "l3_size": "11KiB", "l3_ways": 11}
    mu = gm.miss_share(scale, seed, c, l3_lines=l3_lines, vertices=c["vertices"])
    machine = gm.Machine(local=system.LOCAL_NS, same=system.REMOTE_NS, cross=system.CROSS_NS, flush=0.0)
    mix = sum(c["edge_sources"][0][t] * machine.latency(0, t, p) for t in range(p)) / c["edges"][0]
    for variant, memory_ns in (("stock", machine.local), ("bi", mix)):
        trace = tmp_path / f"{variant}.trace"
        trace.write_text(
            "".join(
                f"0 c0.0 R {hex((m if variant == 'bi' else 0) * (1 << 30) + u * 64)} 64\n"
                for u, m in zip(sources, masters)
            )
        )
        cfg = system.superdome(
            sockets=p,
            bi=caches,
            workload={"pattern": "trace", "trace": str(trace), "line": "64B", "footprint": f"{p}GiB"},
            max_time="1s",
        )
        s = fabricsim.run(cfg).summary
        assert s["outcome"] == "completed"
        model = (1 - mu) * 22.0 + mu * memory_ns
        assert s["latency_ns"]["mean"] == pytest.approx(model, rel=0.15), variant
