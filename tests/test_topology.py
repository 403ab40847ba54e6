import networkx as nx
import numpy as np
import pytest

from mamab import topology as topo
from mamab.errors import ConfigError


@pytest.mark.parametrize(
    ("make", "n", "diameter", "max_degree"),
    [
        (topo.complete, 6, 1, 5),
        (topo.ring, 6, 3, 2),
        (topo.line, 6, 5, 2),
        (topo.star, 6, 2, 5),
        (topo.grid, 6, 3, 3),
        (topo.complete, 1, 0, 0),
        (topo.ring, 2, 1, 1),
    ],
)
def test_named_graphs(make, n, diameter, max_degree):
    g = make(n)
    assert g.n_agents == n
    assert g.diameter == diameter
    assert g.max_degree == max_degree
    for a, nbs in enumerate(g.neighbours):
        assert list(nbs) == sorted(nbs) and a not in nbs
        assert all(a in g.neighbours[b] for b in nbs)


def test_erdos_renyi_is_connected_and_seeded():
    a = topo.erdos_renyi(60, 10 / 60, np.random.default_rng(3))
    b = topo.erdos_renyi(60, 10 / 60, np.random.default_rng(3))
    c = topo.erdos_renyi(60, 10 / 60, np.random.default_rng(4))
    assert a.is_connected and a.neighbours == b.neighbours != c.neighbours
    mean_degree = a.degrees.mean()
    assert 6 < mean_degree < 14  # expectation about 10


@pytest.mark.parametrize(
    ("n", "p"),
    # (12, 0.2) and (20, 0.15) need up to 8 draws for some of the seeds
    [(1, 0.5), (2, 1.0), (12, 0.2), (20, 0.15), (20, 0.3), (37, 0.2), (150, 10 / 150)],
)
def test_erdos_renyi_is_networkx_s_graph_of_the_same_pairs(n, p):
    """The neighbours built from the drawn pairs with numpy, and the search for connectivity,
    are networkx's: the same graph, redrawn as often (the draws go on in one stream)."""
    import networkx as nx

    most = 0  # draws a seed needed, at most
    for seed in range(8):
        built = topo.erdos_renyi(n, p, np.random.default_rng(seed))
        stream = np.random.default_rng(seed)
        draws, connected = 0, False
        while not connected:
            graph = nx.empty_graph(n)
            for rows, cols in topo._gnp_edges(n, p, stream):
                graph.add_edges_from(zip(rows.tolist(), cols.tolist(), strict=True))
            draws, connected = draws + 1, nx.is_connected(graph)
        most = max(most, draws)
        expected = topo.Topology.from_networkx(graph, "erdos-renyi", copy=False)
        assert built.neighbours == expected.neighbours
        assert built.is_connected and built.diameter == expected.diameter
    assert most > 1 or (n, p) not in {(12, 0.2), (20, 0.15)}  # redraws are covered


def test_connectivity_search_finds_a_cut():
    assert topo._connected(((1,), (0, 2), (1,)))
    assert not topo._connected(((1,), (0,), (3,), (2,)))
    assert not topo._connected(((), (2,), (1,)))  # node 0 alone
    assert not topo._connected(((1,), (0,), ()))  # the last node alone
    assert not topo.Topology("cut", ((1,), (0,), ()), None).is_connected


def test_erdos_renyi_gives_up_clearly():
    with pytest.raises(ConfigError, match="no connected"):
        topo.erdos_renyi(50, 0.03, np.random.default_rng(0), tries=5)  # 0.001: hopeless, refused


def test_csr_matches_neighbours():
    g = topo.grid(12)
    indptr, indices = g.csr()
    for n in range(12):
        assert tuple(indices[indptr[n] : indptr[n + 1]]) == g.neighbours[n]


def test_from_networkx_and_disconnected():
    g = topo.Topology.from_networkx(nx.Graph([(0, 1), (2, 3)]))
    assert not g.is_connected
    with pytest.raises(ConfigError, match="disconnected"):
        _ = g.diameter
    with pytest.raises(ConfigError, match=r"0\.\.2"):
        topo.Topology.from_networkx(nx.Graph([(0, 5), (5, 1)]))


def test_edge_list_file(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("# a path\n0 1\n1 2  # trailing comment\n\n2 3\n")
    g = topo.from_edge_list(path, 4)
    assert g.neighbours == ((1,), (0, 2), (1, 3), (2,))
    assert topo.build(str(path), 4).neighbours == g.neighbours


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("0 1\n1 x\n", "line 2"),
        ("0 1 2\n", "line 1"),
        ("0 7\n", "agent 7 outside"),
        ("1 1\n", "self-loop"),
    ],
)
def test_edge_list_errors(tmp_path, text, match):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        topo.from_edge_list(path, 4)


def test_unknown_graph_and_bad_probability():
    with pytest.raises(ConfigError, match="unknown graph"):
        topo.build("hypercube", 4)
    for p in (0, -0.1, 1.5):
        with pytest.raises(ConfigError, match="edge probability"):
            topo.erdos_renyi(5, p, np.random.default_rng(0))


@pytest.mark.parametrize("make", [topo.complete, topo.ring, topo.line, topo.star, topo.grid])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12])
def test_known_diameters_match_networkx(make, n):
    g = make(n)
    assert g.diameter == (0 if n == 1 else nx.diameter(g._graph))
