"""The fast engine reproduces the reference agents exactly: arms, regret and every counter."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mamab import ALGORITHMS, AlgorithmParams, Config, simulate
from mamab.agents import SPLITS_ARMS
from mamab.agents.registry import can_lie, supports_faults
from mamab.attacks import ATTACKS
from mamab.topology import GRAPH_KINDS


def malicious(n: int) -> st.SearchStrategy:
    """How many agents lie (counts), or which (sorted ids): both forms of Config.malicious."""
    counts = st.sampled_from([0, 0, min(1, n - 1), n - 1, n // 2])
    ids = st.sets(st.integers(0, n - 1), max_size=n - 1).map(lambda chosen: tuple(sorted(chosen)))
    return st.one_of(counts, ids)


def _erdos_renyi_only(graph: str, edge_prob: float | None) -> float | None:
    """The drawn edge probability on an Erdős–Rényi graph; None on the others (Config refuses it)."""
    return edge_prob if graph == "erdos-renyi" else None


@st.composite
def configs(draw, algorithm: str) -> Config:
    n = draw(st.integers(1, 8))
    low = n if algorithm in SPLITS_ARMS else 1
    k = draw(st.integers(low, max(low, 40)))
    reward = draw(st.sampled_from(["bernoulli", "gaussian"]))
    faults = supports_faults(algorithm)  # dducb, ucb-network refuse faults (docs/faults.md)
    params = AlgorithmParams(
        alpha=draw(st.sampled_from([0.5, 2.0, 4.0])),
        demab_radius=draw(st.sampled_from([None, 0.5, 8.0, 32.0])),
        demab_best_arm=draw(st.sampled_from(["shared", "own"])),
        relay_k_prime=draw(st.sampled_from(["agents", "degree"])),
        block_exponent=draw(st.sampled_from([2.0, 1.01, 1.5, 3.0])),
    )
    if algorithm == "dducb":
        params = AlgorithmParams(
            alpha=params.alpha,
            dducb_index=draw(st.sampled_from(["every-step", "per-stage"])),
            dducb_epsilon=draw(st.sampled_from([1 / 22, 0.5, 0.99])),
        )
    liars = can_lie(algorithm)  # malicious agents, for the algorithms that model them
    return Config(
        algorithm=algorithm,
        agents=n,
        arms=k,
        horizon=draw(st.integers(1, 2500)),
        runs=draw(st.integers(1, 2)),
        seed=draw(st.integers(0, 2**32 - 1)),
        reward=reward,
        sigma=draw(st.sampled_from([0.1, 1.0, 3.0])) if reward == "gaussian" else 1.0,
        graph=(graph := draw(st.sampled_from(GRAPH_KINDS))),
        # drawn for every graph (the examples stay those of earlier versions), taken by one only
        edge_prob=_erdos_renyi_only(graph, draw(st.sampled_from([None, 0.4, 1.0]))),
        params=params,
        grid_points=draw(st.integers(1, 50)),
        loss=draw(st.sampled_from([0.0, 0.0, 0.25, 0.7, 1.0])) if faults else 0.0,
        delay=draw(st.sampled_from([0.0, 0.0, 0.3, 0.8, 1.0])) if faults else 0.0,
        crash_rate=draw(st.sampled_from([0.0, 0.0, 0.0005, 0.01])) if faults else 0.0,
        recover_after=draw(st.sampled_from([0, 0, 1, 50, 400])) if faults else 0,
        malicious=draw(malicious(n) if liars else st.just(0)),
        attack=draw(st.sampled_from(ATTACKS)),
    )


def assert_identical(config: Config) -> None:
    fast = simulate(config, engine="fast", trace=True, jobs=1)
    ref = simulate(config, engine="reference", trace=True)
    untraced = simulate(config, engine="fast", jobs=1)  # kernels take other paths untraced
    assert np.array_equal(untraced.regret, ref.regret), "regret differs without a trace"
    assert np.array_equal(untraced.bits, ref.bits), "bits differ without a trace"
    for name in ref.counts:
        assert np.array_equal(untraced.counts[name], ref.counts[name]), f"{name} (untraced)"
    assert np.array_equal(fast.arms, ref.arms), "arm choices differ"
    assert np.array_equal(fast.grid, ref.grid)
    assert np.array_equal(fast.regret, ref.regret), "regret differs"
    assert np.array_equal(fast.bits, ref.bits), "bits on the grid differ"
    assert np.array_equal(fast.bits[:, :, -1], ref.counts["bits_sent"])
    for name in ref.counts:
        assert np.array_equal(fast.counts[name], ref.counts[name]), f"{name} differs"
    assert np.array_equal(fast.means, ref.means)
    assert np.array_equal(fast.malicious, ref.malicious)


def _property(algorithm: str):
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(config=configs(algorithm))
    def check(config):
        assert_identical(config)

    return check


test_lcc_ucb = _property("lcc-ucb")
test_lcc_ucb_graph = _property("lcc-ucb-graph")
test_lcc_ucb_relay = _property("lcc-ucb-relay")
test_no_communication = _property("no-communication")
test_full_communication = _property("full-communication")
test_demab = _property("demab")
test_gosine = _property("gosine")
test_gosine_robust = _property("gosine-robust")
test_coop_ucb2 = _property("coop-ucb2")
test_dducb = _property("dducb")
test_ucb_network = _property("ucb-network")
test_lcc_ucb_robust = _property("lcc-ucb-robust")


def test_full_communication_in_lockstep(monkeypatch):
    """On a complete graph with Bernoulli rewards and no faults every agent holds the same
    table, and the fast engine keeps one (the UCB kernel's _lockstep): the reference's numbers
    exactly, from N = 2, with padding slots and past a noise block; a fault, Gaussian rewards or
    another graph leave it."""
    import mamab.algorithms.ucb.driver as driver

    calls = []  # tables of one row: one table for all agents
    grouped = driver.grouped_ucb
    monkeypatch.setattr(
        driver,
        "grouped_ucb",
        lambda n, *a, **k: calls.extend([1] * (n == 1)) or grouped(n, *a, **k),
    )
    for agents, arms, horizon, seed in ((2, 5, 700, 1), (7, 150, 5000, 2), (12, 37, 900, 3)):
        calls.clear()
        assert_identical(
            Config("full-communication", agents=agents, arms=arms, horizon=horizon, seed=seed)
        )
        assert calls, (agents, arms)
    for other in ({"loss": 0.1}, {"delay": 0.2}, {"crash_rate": 0.01}, {"reward": "gaussian"}):
        calls.clear()
        assert_identical(
            Config("full-communication", agents=5, arms=20, horizon=600, seed=4, **other)
        )
        assert not calls, other
    calls.clear()
    assert_identical(
        Config("full-communication", agents=9, arms=20, horizon=600, graph="ring", seed=5)
    )
    assert not calls


def test_full_communication_without_faults_hears_every_neighbour():
    """The faultless kernel settles a receiver's samples two by two (and an odd one last): a
    star's centre and leaves, degrees about 5 to 14 on a random graph, complete graphs of even
    and odd degree with Gaussian rewards (not in lockstep)."""
    for config in (
        Config("full-communication", agents=6, arms=10, horizon=300, graph="star", seed=3),
        Config(
            "full-communication",
            agents=20,
            arms=30,
            horizon=200,
            graph="erdos-renyi",
            edge_prob=0.5,
            seed=5,
        ),
        Config("full-communication", agents=7, arms=12, horizon=400, reward="gaussian", seed=6),
        Config("full-communication", agents=8, arms=12, horizon=400, reward="gaussian", seed=7),
    ):
        assert_identical(config)


def test_the_lcc_family_s_small_tiles_play_as_the_reference():
    """Ready tiles of at most SMALL_SET slots play in vectors when no trace is kept: several
    tiles and a partial one, windows that start within a noise block (T > 4096), sets that
    become ready at different rows, Gaussian rewards, faults and liars (assert_identical runs
    the fast engine untraced too)."""
    for config in (
        Config("lcc-ucb-graph", agents=19, arms=60, horizon=5000, graph="erdos-renyi", seed=3),
        Config("lcc-ucb-relay", agents=13, arms=40, horizon=4500, graph="ring", seed=4),
        Config("lcc-ucb", agents=11, arms=33, horizon=4200, reward="gaussian", seed=5),
        Config(
            "lcc-ucb",
            agents=10,
            arms=30,
            horizon=3000,
            crash_rate=0.002,
            recover_after=40,
            delay=0.1,
            seed=6,
        ),
        Config("lcc-ucb-robust", agents=9, arms=27, horizon=2500, malicious=2, seed=7),
    ):
        assert_identical(config)


def test_agents_alone_in_blocks_within_the_cache_play_as_the_reference():
    """no-communication draws blocks of cache_steps steps beyond 16 agents (1638 at N = 40, 131
    at N = 500): tiles that play a block through, crashes and recoveries across its edges,
    Gaussian rewards, the same numbers as the reference agents."""
    from mamab.problem import block_steps

    cases = (
        Config(
            "no-communication",
            agents=40,
            arms=12,
            horizon=3500,
            crash_at=tuple({3: 1638, 17: 1639, 30: 1700}.get(n, 0) for n in range(40)),
            recover_after=60,
            seed=8,
        ),
        Config("no-communication", agents=500, arms=5, horizon=400, crash_rate=0.002, seed=9),
        Config("no-communication", agents=20, arms=9, horizon=4000, reward="gaussian", seed=10),
    )
    assert [block_steps(c.agents, cache=True) for c in cases] == [1638, 131, 3276]
    for config in cases:
        assert_identical(config)


def test_counters_by_block_and_rows_by_vector_play_as_the_reference():
    """Past a noise block of 4096 steps, with many grid points: full communication under loss
    alone (its counters added by block, the lost messages by edge), coop-UCB2 with arms not a
    multiple of eight and delayed estimates (its rows in vectors of eight), GosInE after gossip
    and recoveries (its pointer past the tried arms)."""
    cases = (
        Config(
            "full-communication",
            agents=12,
            arms=21,
            horizon=5000,
            graph="erdos-renyi",
            edge_prob=0.4,
            loss=0.5,
            grid_points=40,
            seed=11,
        ),
        Config("coop-ucb2", agents=6, arms=13, horizon=5000, delay=0.3, loss=0.1, seed=12),
        Config("gosine", agents=7, arms=30, horizon=5000, crash_rate=0.001, recover_after=30),
    )
    for config in cases:
        assert_identical(config)


def test_lcc_inverse_root_table_holds_the_kernel_s_numbers():
    """The LCC kernel reads 1 / sqrt(count) from a table made by numpy: every entry must be the
    scalar expression's bits, or the choices drift from the reference's."""
    import math

    from mamab.algorithms.lcc.kernel import ROOT_TABLE, inv_root_table

    table = inv_root_table(10**9)
    assert table.size == ROOT_TABLE and table[0] == 0.0
    expected = np.array([1.0 / math.sqrt(c) for c in range(1, ROOT_TABLE)])
    assert np.array_equal(table[1:], expected)
    assert inv_root_table(100).size == 101


def test_lcc_family_small_sets_in_vector_lanes():
    """Sets of a few arms scan in their tile's lanes too, tiles full and partial (6 agents), with
    faults and liars: the reference's results."""
    for algorithm in ("lcc-ucb", "lcc-ucb-graph", "lcc-ucb-relay", "lcc-ucb-robust"):
        for extra in (
            {},
            {"loss": 0.2, "delay": 0.3, "crash_rate": 0.002, "recover_after": 40, "malicious": 1},
        ):
            assert_identical(
                Config(algorithm, agents=6, arms=30, horizon=900, graph="ring", seed=7, **extra)
            )


def test_ucb_kernels_for_fewer_faults_give_the_general_kernel_s_results(monkeypatch):
    """A run of a UCB baseline without faults, or whose only fault is message loss, takes the
    kernel compiled without the code of the others; forced onto the general kernel it gives the
    same results."""
    import mamab.algorithms.ucb.driver as driver
    from mamab.engine import recording

    taken = []
    feed = recording.FastRun.feed

    def recorded(self, kernel, *args):
        taken.append(kernel.__name__)
        return feed(self, kernel, *args)

    monkeypatch.setattr(recording.FastRun, "feed", recorded)
    cases = {
        "ucb_chunk_faultless": [
            Config("full-communication", agents=9, arms=40, horizon=700, seed=3, runs=2, **extra)
            for extra in ({"graph": "ring"}, {"graph": "erdos-renyi"}, {"reward": "gaussian"})
        ],
        "ucb_chunk_lossy": [
            Config("full-communication", agents=9, arms=40, horizon=700, seed=4, runs=2, **extra)
            for extra in ({"loss": 0.3}, {"loss": 0.8, "graph": "erdos-renyi"})
        ],
        "ucb_chunk": [
            Config("full-communication", agents=5, arms=8, horizon=300, seed=5, **extra)
            for extra in ({"delay": 0.2, "loss": 0.1}, {"crash_rate": 0.01, "loss": 0.1})
        ]
        + [Config("no-communication", agents=5, arms=8, horizon=300, seed=5)],  # _alone
    }
    results = {}
    for name, configs in cases.items():
        taken.clear()
        results[name] = [simulate(c, engine="fast", jobs=1) for c in configs]
        assert set(taken) == {name}
    monkeypatch.setattr(driver, "ucb_chunk_faultless", driver.ucb_chunk)
    monkeypatch.setattr(driver, "ucb_chunk_lossy", driver.ucb_chunk)
    for name in ("ucb_chunk_faultless", "ucb_chunk_lossy"):
        for config, result in zip(cases[name], results[name], strict=True):
            assert simulate(config, engine="fast", jobs=1) == result, config


def test_every_algorithm_is_covered():
    covered = {
        name.removeprefix("test_").replace("_", "-")
        for name in globals()
        if name.startswith("test_")
    }
    assert set(ALGORITHMS) <= covered


def test_long_horizon_crosses_chunks_and_lazy_blocks():
    # T > the 4096-step noise chunk, late enough for long candidate blocks; paper-like shape.
    for algorithm in (
        "lcc-ucb",
        "no-communication",
        "full-communication",
        "demab",
        "gosine",
        "dducb",
        "ucb-network",
    ):
        assert_identical(Config(algorithm, agents=5, arms=60, horizon=12_000, seed=3))
    # full communication off the lockstep path, without faults: its message counters are added
    # per block and at grid points, and noise blocks end between grid points here
    assert_identical(
        Config("full-communication", agents=6, arms=20, horizon=9000, graph="ring", seed=3)
    )


def test_engines_split_runs_the_same_way():
    config = Config(
        "lcc-ucb-graph", agents=6, arms=18, horizon=900, runs=4, graph="erdos-renyi", seed=8
    )
    one = simulate(config, jobs=1)
    two = simulate(config, jobs=2)
    assert np.array_equal(one.regret, two.regret)
    assert all(np.array_equal(one.counts[k], two.counts[k]) for k in one.counts)


def test_agents_alone_in_vector_lanes():
    # No-communication plays its agents LANES (8) at a time: full and partial tiles (N = 1, 4, 5,
    # 6, 8, 9), past the first noise block of 4096 steps, where a tile of agents alive since the start
    # shares one width and skips the per-agent checks (and from lanes.BLOCKS_FROM arms, 64 with
    # AVX-512, scans by blocks, where Bernoulli rewards make exact ties); crashes (and
    # recoveries) before, inside and at the edge of later blocks take tiles off that path;
    # Gaussian rewards; one arm.
    never = (0,) * 9
    for n, k, reward, crash_at in (
        (1, 7, "bernoulli", never),
        (4, 130, "gaussian", (0, 0, 4100, 0)),
        (6, 33, "bernoulli", (0, 5000, 0, 0, 2000, 0)),
        (9, 64, "bernoulli", (0, 0, 0, 8193, 0, 0, 100, 8192, 6000)),
        (8, 40, "bernoulli", never),  # one full tile, alive since the start
        (8, 137, "bernoulli", never),  # by blocks of 8 slots and a tail (lanes.BLOCKS_FROM)
        (5, 1, "gaussian", never),
    ):
        config = Config(
            "no-communication",
            agents=n,
            arms=k,
            horizon=9000,
            seed=11 + n,
            reward=reward,
            crash_at=crash_at[:n],
            recover_after=300,
            grid_points=29,
        )
        assert_identical(config)


def test_lcc_family_beyond_small_sets_in_vector_lanes():
    # Agents holding tens to hundreds of arms choose by their tile's scan in vector lanes,
    # beyond LANE_SET (256) by lazy candidates: tiles full and partial, sets that grow at phase
    # ends (recommendations, a relay's flood, late ones under delay) and cross LANE_SET within a
    # tile (1270 arms among 5 agents: 254 each, up to 4 recommended at the end of short phases),
    # restarts after crashes, liars and the robust agents' blocks.
    short_phases = AlgorithmParams(k_prime=4)  # phases of 20, 40, 80, ... steps
    for config in (
        Config(
            "lcc-ucb",
            agents=5,
            arms=1270,
            horizon=3000,
            seed=20,
            params=short_phases,
            crash_at=(0, 0, 2000, 0, 0),
        ),
        Config("lcc-ucb", agents=2, arms=700, horizon=5000, seed=25, reward="gaussian"),
        Config(
            "lcc-ucb",
            agents=6,
            arms=200,
            horizon=9000,
            seed=21,
            crash_at=(0, 3000, 0, 0, 0, 700),
            recover_after=400,
        ),
        Config(
            "lcc-ucb-relay",
            agents=9,
            arms=150,
            horizon=6000,
            seed=22,
            graph="erdos-renyi",
            loss=0.1,
            delay=0.3,
        ),
        # a relay whose flood gives every agent tens of arms at a phase's end
        Config("lcc-ucb-relay", agents=12, arms=240, horizon=2000, seed=0, params=short_phases),
        Config(
            "lcc-ucb-robust",
            agents=5,
            arms=160,
            horizon=6000,
            seed=23,
            malicious=1,
            reward="gaussian",
        ),
        Config(
            "lcc-ucb-graph",
            agents=7,
            arms=130,
            horizon=6000,
            seed=24,
            graph="ring",
            crash_rate=0.0005,
            recover_after=100,
        ),
    ):
        assert_identical(config)


def test_ucb_baselines_across_tiles_groups_and_faults():
    # More agents than a vector tile of agents alone (8), arms in several groups of 16 with padding,
    # crashes with recovery, grid points inside chunks; full communication with loss and delay,
    # and on a complete graph, where a receiver hears one arm from several neighbours in one
    # exchange (its mean is computed once, after the last).
    faults = {"crash_rate": 0.002, "recover_after": 60, "grid_points": 37}
    assert_identical(Config("no-communication", agents=13, arms=53, horizon=1500, seed=5, **faults))
    assert_identical(
        Config(
            "full-communication",
            agents=11,
            arms=37,
            horizon=900,
            seed=6,
            graph="erdos-renyi",
            loss=0.2,
            delay=0.3,
            reward="gaussian",
            **faults,
        )
    )
    for algorithm in ("no-communication", "full-communication"):
        assert_identical(Config(algorithm, agents=9, arms=150, horizon=1200, seed=7, **faults))


def test_full_communication_chooses_among_many_groups():
    """The choice's passes where the first group is found in vector registers (16 groups of
    slots and more) and where the groups are scanned one by one (more than 64): Bernoulli
    arms with ties among them (equal means, so equal counts and sums often give equal
    indices), a ring and a random graph, faults on one (the kernel for any fault)."""
    means = (*np.repeat([0.3, 0.5, 0.7, 0.7], 65).tolist(), 0.7)  # 261 arms: 17 groups
    for config in (
        Config(
            "full-communication", agents=6, arms=261, horizon=900, graph="ring", means=means, seed=3
        ),
        Config(
            "full-communication",
            agents=7,
            arms=261,
            horizon=700,
            graph="erdos-renyi",
            edge_prob=0.5,
            means=means,
            crash_rate=0.002,
            recover_after=30,
            seed=4,
        ),
        Config("full-communication", agents=5, arms=1030, horizon=1300, graph="ring", seed=5),
    ):
        assert_identical(config)
