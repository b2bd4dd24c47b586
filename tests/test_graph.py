"""The graph workload behind BI Fig 13 (R-MAT, random vertex cut, PageRank), through the binding."""

import json

import pytest

from fabricsim import _core


@pytest.fixture(scope="module")
def graph():
    return _core.RmatGraph(12, seed=3)


def test_cut_is_consistent_and_replication_matches_powergraphs_closed_form(graph):
    assert graph.edges == 35 * 4096
    c = json.loads(graph.cut(4, seed=2))
    assert sum(c["edges"]) == graph.edges
    assert sum(c["masters"]) == c["vertices"]
    assert sum(c["mirrors"]) == sum(map(sum, c["pairs"]))
    assert all(c["pairs"][s][s] == 0 for s in range(4))
    assert c["replication"] == pytest.approx(c["replication_expected"], rel=0.02)


def test_same_seed_same_bytes(graph):
    again = _core.RmatGraph(12, seed=3)
    assert graph.cut(8) == again.cut(8)
    assert graph.pagerank(8, p_stale=0.5) == again.pagerank(8, p_stale=0.5)


def test_stale_remote_reads_slow_convergence(graph):
    fresh = json.loads(graph.pagerank(4))
    stale = json.loads(graph.pagerank(4, p_stale=1.0))
    assert fresh["converged"] and stale["converged"]
    assert fresh["stale_reads"] == 0 and stale["stale_reads"] == stale["remote_reads"] > 0
    assert stale["iterations"] > fresh["iterations"]


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: _core.RmatGraph(40), "scale 40"),
        (lambda: _core.RmatGraph(12, edge_factor=0), "edge_factor 0"),
        (lambda: _core.RmatGraph(4).cut(17), "sockets 17"),
        (lambda: _core.RmatGraph(4).pagerank(2, p_stale=1.5), "p_stale 1.5"),
        (lambda: _core.RmatGraph(4).pagerank(2, tolerance=0.0), "tolerance 0"),
    ],
)
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises(ValueError, match=words):
        call()
