"""Issue 14: the readings the paper leaves open, each checked on a small case computed by hand.

Bernoulli arms of mean 1 and 0 give deterministic rewards (1 always, 0 always), so elimination
times, epoch counts and regrets follow from the formulas alone.
"""

import math

import numpy as np
import pytest

from mamab import AlgorithmParams, Config, simulate
from mamab.agents import ALGORITHMS, ALPHA_DEFAULTS, alpha_of, demab_radius_of, lcc_shape
from mamab.errors import ConfigError
from mamab.experiments.aggregate import ConfigResult
from mamab.experiments.report import (
    Axis,
    Reading,
    axis_fits,
    axis_rows,
    best_alpha,
    claims_by_reading,
    fidelity_section,
    readings,
)
from mamab.experiments.reproduce import with_alpha
from mamab.experiments.spec import load_preset, parse_spec
from mamab.experiments.tasks import config_id
from mamab.plots import Style, frontier_ticks
from mamab.result import COUNTERS
from mamab.timegrid import time_grid
from mamab.topology import build

ENGINES = ("fast", "reference")


def both(config: Config) -> list:
    return [simulate(config, engine=engine, jobs=1) for engine in ENGINES]


# -- alpha per algorithm --


def test_alpha_defaults_cover_every_algorithm_and_alpha_overrides_all_but_demab():
    assert set(ALPHA_DEFAULTS) == set(ALGORITHMS)
    assert alpha_of("gosine", AlgorithmParams()) == 4.0
    assert alpha_of("lcc-ucb", AlgorithmParams()) == 2.0
    for algorithm in ALGORITHMS:
        expected = ALPHA_DEFAULTS["demab"] if algorithm == "demab" else 0.5
        assert alpha_of(algorithm, AlgorithmParams(alpha=0.5)) == expected
    assert demab_radius_of(AlgorithmParams(alpha=0.5, demab_radius=16)) == 16.0


@pytest.mark.parametrize(
    "params",
    [
        dict(demab_radius=0.0),
        dict(demab_radius=-1.0),
        dict(demab_radius=float("inf")),
        dict(demab_radius="2"),
        dict(alpha=float("nan")),
        dict(demab_best_arm="none"),
        dict(relay_k_prime="all"),
    ],
)
def test_bad_readings_are_refused(params):
    with pytest.raises(ConfigError):
        AlgorithmParams(**params)


def test_with_alpha_sets_only_the_paper_algorithms_left_to_the_default():
    spec = with_alpha(load_preset("paper-quick"), 1.5)
    for _, config in spec.configs:
        alpha = config.params.alpha
        if config.algorithm in ("demab", "gosine", "coop-ucb2"):
            assert alpha is None
        else:
            assert alpha in (1.0, 1.5)  # the preset's alpha = 1 figures keep theirs
    with pytest.raises(ConfigError):
        with_alpha(spec, 0.0)


# -- DEMAB's radius constant and best-arm rule --


@pytest.mark.parametrize("radius", [0.5, 2.0, 8.0])
def test_demab_radius_sets_when_stage_one_drops_the_bad_arm(radius):
    # One agent, arms of mean 1 and 0: after n pulls of each, the bad arm's upper bound
    # r(n) = sqrt(c·log T / n) falls below the good arm's lower bound 1 - r(n) once n > 4c·log T.
    horizon = 4000
    config = Config(
        "demab", 1, 2, horizon, means=(1.0, 0.0), params=AlgorithmParams(demab_radius=radius)
    )
    pulls = math.floor(4 * radius * math.log(horizon)) + 1
    assert pulls < horizon // 2  # inside stage 1 (T/(NK) steps)
    for result in both(config):
        assert result.regret[0, 0, -1] == pulls


@pytest.mark.parametrize("rule", ["shared", "own"])
def test_demab_best_arm_rule_decides_what_an_idle_agent_plays(rule):
    # Two agents, one arm each (good: mean 1; bad: mean 0). After stage 1 (D1 = T/4 steps) the
    # server announces the good arm with bound 1 - r(D1); the bad arm's bound r(D1) is below it,
    # so its agent has no arm left. Sharing the best arm it switches to it (regret D1); not
    # sharing it keeps playing the arm it reported (regret T). No re-division: sizes 1 and 0.
    horizon = 1000
    d1 = horizon // 4
    assert math.sqrt(2 * math.log(horizon) / d1) < 0.5
    config = Config(
        "demab", 2, 2, horizon, means=(1.0, 0.0), params=AlgorithmParams(demab_best_arm=rule)
    )
    idle_regret = d1 if rule == "shared" else horizon
    for result in both(config):
        assert sorted(result.regret[0, :, -1].tolist()) == [0.0, idle_regret]


# -- relay's K' --


def _epochs(horizon: int, kp: int) -> int:
    """Epochs the horizon spans (the last one cut at T), directly: epoch j lasts K'(K'+1)·2^j."""
    epochs, t = 0, 0
    while t < horizon:
        t += kp * (kp + 1) * 2**epochs
        epochs += 1
    return epochs


@pytest.mark.parametrize("reading", ["agents", "degree"])
def test_relay_k_prime_reading_sets_the_epochs(reading):
    n, k, horizon = 6, 12, 3000
    ring = build("ring", n)
    params = AlgorithmParams(relay_k_prime=reading)
    kp = math.ceil(k / n) + (n - 1 if reading == "agents" else ring.max_degree)
    assert lcc_shape("lcc-ucb-relay", ring, k, params) == (kp, 1)
    config = Config("lcc-ucb-relay", n, k, horizon, graph="ring", params=params)
    # after every epoch (the cut last one too) each agent of a ring of 6 floods for 3 rounds
    rounds = ring.diameter * _epochs(horizon, kp)
    for result in both(config):
        assert (result.counts["rounds"] == rounds).all()


# -- the time grid --


def test_mixed_grid_adds_evenly_spaced_late_points():
    horizon, points = 200_000, 200
    log, mixed = time_grid(horizon, points), time_grid(horizon, points, "mixed")
    assert log[-1] == mixed[-1] == horizon and np.all(np.diff(mixed) > 0)
    assert np.isin(np.rint(np.linspace(2000, horizon, 100)).astype(np.int64), mixed).all()
    assert (mixed >= horizon // 2).sum() >= 50 > (log >= horizon // 2).sum()
    with pytest.raises(ConfigError):
        Config("lcc-ucb", 2, 4, 10, grid_style="linear")


def test_preset_keys_reach_the_configurations():
    spec = parse_spec(
        {
            "experiments": [
                {
                    "algorithms": ["demab", "lcc-ucb-relay"],
                    "agents": 2,
                    "arms": 4,
                    "horizon": 50,
                    "graph": "ring",
                    "grid_style": "mixed",
                    "demab_radius": 16,
                    "demab_best_arm": "own",
                    "relay_k_prime": "degree",
                }
            ],
        }
    )
    for _, config in spec.configs:
        assert config.grid_style == "mixed"
        assert config.params.demab_radius == 16.0 and config.params.demab_best_arm == "own"
        assert config.params.relay_k_prime == "degree"
    with pytest.raises(ConfigError, match="experiments\\[0\\]"):
        parse_spec(
            {
                "experiments": [
                    {
                        "algorithms": "demab",
                        "agents": 2,
                        "arms": 4,
                        "horizon": 9,
                        "demab_best_arm": "nobody",
                    }
                ]
            }
        )


# -- figures --


def test_frontier_ticks_label_every_scale():
    assert frontier_ticks([0.0, 1200.0, 3000.0]) == [0.0, 1000.0, 2000.0, 3000.0]
    assert len(frontier_ticks([5000.0, 6000.0])) >= 2  # under a decade: 1..9 mantissas
    assert frontier_ticks([1.0, 1e6]) == [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
    with pytest.raises(ConfigError):
        Style(formats=("gif",))
    with pytest.raises(ConfigError):
        Style(dpi=5)


# -- the report's comparison with the paper, recomputed --


def synthetic(
    algorithm: str, n: int, k: int, horizon: int, finals: list[float], **params
) -> ConfigResult:
    """A configuration whose run r ends with regret finals[r] per agent (a straight line to it)."""
    config = Config(algorithm, n, k, horizon, runs=len(finals), params=AlgorithmParams(**params))
    runs, agents = len(finals), n
    end = np.array(finals, dtype=float)
    counters = np.zeros((len(COUNTERS), runs, agents))
    figure = "complete" if params.get("alpha") is None else "complete-alpha1"
    return ConfigResult(
        experiment=figure,
        figure=figure,
        config_id=config_id(config),
        config=config.to_dict(),
        grid=np.array([1, horizon // 2, horizon]),
        regret=np.outer(end, [0.0, 0.5, 1.0]),
        bits=np.zeros((runs, 3)),
        final_regret=np.repeat(end[:, None], agents, axis=1),
        counters=counters,
        diameter=np.ones(runs, dtype=np.int64),
        max_degree=np.full(runs, n - 1, dtype=np.int64),
        crash=np.full((runs, agents), horizon + 1),
    )


def complete_family() -> list[ConfigResult]:
    t, runs = 100_000, 5
    spread = np.array([-0.1, -0.05, 0.0, 0.05, 0.1])
    out = []
    for alpha, scale in ((None, 1.7), (1.0, 1.0)):
        p = {} if alpha is None else {"alpha": alpha}
        out += [
            synthetic("no-communication", 10, 100, t, list(3600 * scale * (1 + spread)), **p),
            synthetic("lcc-ucb", 10, 100, t, list(1500 * scale * (1 + spread)), **p),
            synthetic("full-communication", 10, 100, t, list(700 * scale * (1 + spread)), **p),
        ]
    out += [
        synthetic(
            "demab", 10, 100, t, list(5000 * (1 + spread)[:runs])
        ),  # below no-comm at alpha 2
        synthetic(
            "demab",
            10,
            100,
            t,
            list(34_000 * (1 + spread)),
            demab_radius=16.0,
            demab_best_arm="own",
        ),
    ]
    return out


def test_axis_rows_recomputed_from_the_curves():
    results = complete_family()
    rows = {(r.axis.figure, r.reading): r for r in axis_rows("complete", results)}
    paper = Reading(2.0, (16.0, "own"), None)
    recon = Reading(1.0, (2.0, "shared"), None)
    assert rows["Fig. 2a", paper].largest == "demab" and rows["Fig. 2a", paper].median == 34_000
    assert rows["Fig. 2a", recon].largest == "demab"  # 5,000 above no communication's 3,600
    assert rows["Fig. 2a", Reading(2.0, (2.0, "shared"), None)].largest == "no-communication"
    no_demab_2 = rows["Fig. 3a", Reading(2.0, None, None)]
    no_demab_1 = rows["Fig. 3a", Reading(1.0, None, None)]
    # the band of 5 runs is their whole range (ranks 1 and 5); the top is the largest run
    assert no_demab_1.median == pytest.approx(3600) and no_demab_1.high == pytest.approx(3960)
    assert no_demab_1.fits == axis_fits(Axis("", 4000, 500, False), 3960) is True
    assert no_demab_2.fits is False  # 1.05 × 6,732 is far above 4,000 + 500
    assert best_alpha(list(rows.values()))[0] == 1.0


def test_claims_under_each_reading_recomputed_from_the_medians():
    results = complete_family()
    checked = dict(claims_by_reading("complete", results))
    assert set(checked) == set(readings(results))

    def verdict(reading: Reading, text: str) -> bool | None:
        return next(c.reproduced for c in checked[reading] if c.text.startswith(text))

    medians = {
        (
            r.config["algorithm"],
            alpha_of(r.config["algorithm"], AlgorithmParams(**r.config["params"])),
        ): float(np.median(r.final_regret.mean(axis=1)))
        for r in results
    }
    for reading in checked:
        no_comm = medians["no-communication", reading.alpha]
        demab = medians["demab", reading.demab[0]]
        assert verdict(reading, "DEMAB has higher") == (demab > no_comm)
        assert verdict(reading, "LCC-UCB has lower") == (
            medians["lcc-ucb", reading.alpha] < no_comm
        )
    text = "\n".join(fidelity_section("complete", results))
    assert "alpha = 1 matches the paper's figures best" in text
    assert "c = 16 with the own best-arm rule is a fit" in text
    assert (
        "c = 2 with the shared best-arm rule: holds under alpha=1, does not hold under alpha=2"
        in text
    )
