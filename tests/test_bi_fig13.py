"""BI Fig 13's count model (experiments/bi/gas_model.py) on hand-made cuts, where every term is known."""

import pytest

from fabricsim.experiments.bi import gas_model as gm

M = gm.Machine(local=100.0, same=150.0, cross=400.0, flush=5.0)
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
    transfer = 2000 * gm.RECORD_BYTES / gm.LINE * 400 / 4  # two sockets sit in different enclosures
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
