"""Pinned digests: built-in results and preset task ids byte-identical to the pinned commit.

A refactor (issue 19) or kernel speed work (issue 23) must not change any built-in's regret,
counters, bits, arm means or traces, nor the id of any task of a shipped preset. The digests in
``tests/data/result_digests.json`` were computed from the configurations below; each test names
the configuration (and the arrays) that differ. Regenerate them only when a change of results is
intended, and say so in the changelog:

    PYTHONPATH=src python tests/data/make_result_digests.py

A digest is sha256 over each array's name, shape and raw bytes in a fixed dtype and C order
(floats as little-endian float64, integers as little-endian int64, flags as uint8). Float
results are pinned on this machine's numpy and libm (x86_64); another platform may differ in
the last bit of a Gaussian draw or a logarithm.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from mamab import AlgorithmParams as P
from mamab import Config, simulate

DATA = Path(__file__).parent / "data" / "result_digests.json"
#: The presets whose task ids are pinned.
PRESETS = ("paper", "paper-quick", "malicious", "malicious-quick")
#: Small enough that the whole file runs in seconds once the kernels are compiled.
SMALL = {"agents": 4, "arms": 10, "horizon": 400, "runs": 2, "grid_points": 20, "seed": 7}
FAULTS = {"loss": 0.2, "delay": 0.3, "crash_rate": 0.002}
RECOVER = {"crash_rate": 0.004, "recover_after": 40}


def _c(algorithm: str, **kw) -> Config:
    return Config(algorithm, **{**SMALL, **kw})


#: name -> configuration. Names are the keys of the data file: add, never rename.
CONFIGS: dict[str, Config] = {
    # LCC-UCB: every attack, faults with and without recovery, explicit crashes, parameters
    "lcc-ucb/complete": _c("lcc-ucb"),
    "lcc-ucb/gaussian-alpha": _c("lcc-ucb", reward="gaussian", sigma=0.5, params=P(alpha=1.0)),
    "lcc-ucb/er-kprime-sub": _c(
        "lcc-ucb", graph="erdos-renyi", edge_prob=0.6, params=P(k_prime=3, sub_epochs=2)
    ),
    "lcc-ucb/faults": _c("lcc-ucb", **FAULTS),
    "lcc-ucb/recover": _c("lcc-ucb", **RECOVER),
    "lcc-ucb/crash-at": _c("lcc-ucb", crash_at=(0, 150, 0, 300)),
    "lcc-ucb/liar-worst": _c("lcc-ucb", malicious=1, attack="worst"),
    "lcc-ucb/liar-random-ids": _c("lcc-ucb", malicious=(0, 2), attack="random"),
    "lcc-ucb/liar-best-second": _c("lcc-ucb", malicious=1, attack="best-second", **FAULTS),
    "lcc-ucb/liar-truthful": _c("lcc-ucb", malicious=2, attack="truthful"),
    # LCC-UCB-GRAPH on sparse graphs
    "lcc-ucb-graph/ring": _c("lcc-ucb-graph", agents=5, graph="ring"),
    "lcc-ucb-graph/line-faults": _c("lcc-ucb-graph", graph="line", **FAULTS),
    "lcc-ucb-graph/star-liar-random": _c(
        "lcc-ucb-graph", agents=5, graph="star", malicious=1, attack="random"
    ),
    "lcc-ucb-graph/grid-gaussian-sub": _c(
        "lcc-ucb-graph",
        agents=6,
        arms=12,
        graph="grid",
        reward="gaussian",
        params=P(sub_epochs=3, alpha=3.0),
    ),
    # LCC-UCB-RELAY
    "lcc-ucb-relay/er": _c("lcc-ucb-relay", agents=5, graph="erdos-renyi", edge_prob=0.5),
    "lcc-ucb-relay/line-degree": _c(
        "lcc-ucb-relay", graph="line", params=P(relay_k_prime="degree")
    ),
    "lcc-ucb-relay/ring-recover-liar": _c(
        "lcc-ucb-relay", agents=5, graph="ring", malicious=1, attack="worst", **RECOVER
    ),
    # LCC-UCB-ROBUST
    "lcc-ucb-robust/liar-worst": _c("lcc-ucb-robust", malicious=1, attack="worst"),
    "lcc-ucb-robust/ring-random-faults": _c(
        "lcc-ucb-robust", agents=5, graph="ring", malicious=(1,), attack="random", **FAULTS
    ),
    "lcc-ucb-robust/gaussian-best-second": _c(
        "lcc-ucb-robust", reward="gaussian", sigma=2.0, malicious=1, attack="best-second"
    ),
    # no communication
    "no-communication/complete": _c("no-communication"),
    "no-communication/gaussian-alpha": _c(
        "no-communication", reward="gaussian", params=P(alpha=0.5)
    ),
    "no-communication/liar-recover": _c("no-communication", malicious=1, **RECOVER),
    "no-communication/even-grid-later-runs": _c(
        "no-communication", grid_style="mixed", first_run=3, runs=3, seed=2**40
    ),
    # full communication
    "full-communication/complete": _c("full-communication"),
    "full-communication/ring-gaussian": _c(
        "full-communication", agents=5, graph="ring", reward="gaussian"
    ),
    "full-communication/star-faults": _c("full-communication", agents=5, graph="star", **FAULTS),
    "full-communication/recover": _c("full-communication", **RECOVER),
    # DEMAB (a central server)
    "demab/complete": _c("demab"),
    "demab/radius-own": _c("demab", params=P(demab_radius=8.0, demab_best_arm="own")),
    "demab/faults": _c("demab", **FAULTS),
    "demab/gaussian-recover": _c("demab", reward="gaussian", params=P(alpha=1.5), **RECOVER),
    # GosInE and its robust variant
    "gosine/complete": _c("gosine"),
    "gosine/ring-exponent": _c("gosine", agents=5, graph="ring", params=P(gossip_exponent=2.5)),
    "gosine/liar-random-faults": _c("gosine", malicious=1, attack="random", **FAULTS),
    "gosine/gaussian-recover": _c("gosine", reward="gaussian", **RECOVER),
    "gosine-robust/liar-worst-block": _c(
        "gosine-robust", malicious=1, attack="worst", params=P(block_exponent=1.5)
    ),
    "gosine-robust/er-best-second-faults": _c(
        "gosine-robust",
        agents=5,
        graph="erdos-renyi",
        edge_prob=0.7,
        malicious=1,
        attack="best-second",
        **FAULTS,
    ),
    "gosine-robust/truthful": _c("gosine-robust", malicious=(3,), attack="truthful"),
    # coop-UCB2 (running consensus)
    "coop-ucb2/complete": _c("coop-ucb2"),
    "coop-ucb2/ring-kappa-gaussian": _c(
        "coop-ucb2", agents=5, graph="ring", reward="gaussian", params=P(consensus_kappa=0.5)
    ),
    "coop-ucb2/faults": _c("coop-ucb2", **FAULTS),
    "coop-ucb2/recover": _c("coop-ucb2", **RECOVER),
    # DDUCB (no faults, no liars)
    "dducb/complete": _c("dducb"),
    "dducb/ring-per-stage": _c(
        "dducb", agents=5, graph="ring", params=P(dducb_epsilon=0.5, dducb_index="per-stage")
    ),
    "dducb/star-gaussian": _c(
        "dducb", agents=5, graph="star", reward="gaussian", params=P(alpha=1.0)
    ),
    # UCB-Network (no faults, no liars)
    "ucb-network/complete": _c("ucb-network"),
    "ucb-network/star": _c("ucb-network", agents=5, graph="star"),
    "ucb-network/line-gaussian": _c(
        "ucb-network", graph="line", reward="gaussian", params=P(alpha=1.0)
    ),
}

#: Also run on the reference engine (slower): it must give the same digest as the fast one.
REFERENCE = (
    "lcc-ucb/faults",
    "lcc-ucb/recover",
    "lcc-ucb/liar-random-ids",
    "lcc-ucb-graph/line-faults",
    "lcc-ucb-relay/ring-recover-liar",
    "lcc-ucb-robust/ring-random-faults",
    "no-communication/liar-recover",
    "no-communication/even-grid-later-runs",
    "full-communication/star-faults",
    "demab/radius-own",
    "demab/gaussian-recover",
    "gosine/liar-random-faults",
    "gosine-robust/er-best-second-faults",
    "coop-ucb2/faults",
    "dducb/ring-per-stage",
    "ucb-network/star",
)


def _fixed(values: np.ndarray) -> np.ndarray:
    """An array in a fixed dtype and C order, so its bytes mean the same on any run."""
    values = np.asarray(values)
    kind = {"f": "<f8", "i": "<i8", "u": "<i8", "b": "u1"}[values.dtype.kind]
    return np.ascontiguousarray(values, dtype=kind)


def result_arrays(result) -> dict[str, np.ndarray]:
    """Every array of a result that a refactor must keep: grid, regret, bits, counters, means,
    graph facts, crashes, liars and the arm trace."""
    arrays = {
        "grid": result.grid,
        "regret": result.regret,
        "bits": result.bits,
        "means": result.means,
        "diameter": result.diameter,
        "max_degree": result.max_degree,
        "runs": np.asarray(result.runs, dtype=np.int64),
        "crash": result.crash,
        "malicious": result.malicious,
        "arms": result.arms,
        **{f"count_{name}": values for name, values in result.counts.items()},
    }
    missing = [name for name, values in arrays.items() if values is None]
    assert not missing, f"the result has no {', '.join(missing)}"
    return arrays


def digests(result) -> dict[str, str]:
    """sha256 of all arrays (names, shapes and bytes) under ``"all"``, and of each array (its
    first 16 hex digits: they only say which array differs)."""
    whole = hashlib.sha256()
    out = {}
    for name, values in sorted(result_arrays(result).items()):
        fixed = _fixed(values)
        one = hashlib.sha256(f"{name}{fixed.shape}{fixed.dtype.str}".encode())
        one.update(fixed.tobytes())
        whole.update(name.encode() + one.digest())
        out[name] = one.hexdigest()[:16]  # enough to say which array differs
    out["all"] = whole.hexdigest()
    return out


def run_digests(name: str, engine: str = "fast") -> dict[str, str]:
    return digests(simulate(CONFIGS[name], engine=engine, trace=True, jobs=1))


def task_ids(preset: str) -> list[str]:
    """The sorted task names (configuration id and run block) of a shipped preset."""
    from mamab.experiments.aggregate import tasks_of
    from mamab.experiments.spec import load_preset

    return sorted(task.name for task in tasks_of(load_preset(preset)))


def list_digest(names: list[str]) -> str:
    return hashlib.sha256("\n".join(names).encode()).hexdigest()


def pinned() -> dict:
    return json.loads(DATA.read_text())


def _differences(name: str, got: dict[str, str], want: dict[str, str]) -> str:
    arrays = sorted(k for k in set(got) | set(want) if k != "all" and got.get(k) != want.get(k))
    return (
        f"configuration {name!r} differs from its pinned digest in: {', '.join(arrays)}\n"
        f"  config: {CONFIGS[name]!r}"
    )


def test_pinned_names_match_the_configurations():
    """Every configuration is pinned and every pinned one still exists (added, never renamed)."""
    names = set(pinned()["results"])
    assert set(CONFIGS) == names, (
        f"not pinned: {sorted(set(CONFIGS) - names)}; pinned but gone: {sorted(names - set(CONFIGS))}"
        " (regenerate: PYTHONPATH=src python tests/data/make_result_digests.py)"
    )


def test_every_algorithm_is_covered():
    from mamab import ALGORITHMS

    assert {c.algorithm for c in CONFIGS.values()} >= set(ALGORITHMS)


def test_reference_subset_is_pinned():
    assert set(REFERENCE) <= set(CONFIGS)


def test_digest_sees_one_changed_bit():
    """One value one ulp off, or one counter one off, changes the digest and is named."""
    result = simulate(CONFIGS["no-communication/complete"], trace=True, jobs=1)
    want = digests(result)
    result.regret[1, 2, -1] = np.nextafter(result.regret[1, 2, -1], np.inf)
    got = digests(result)
    assert got["all"] != want["all"]
    assert "differs from its pinned digest in: regret\n" in _differences(
        "no-communication/complete", got, want
    )
    result.counts["rounds"][0, 0] += 1
    assert digests(result)["count_rounds"] != want["count_rounds"]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_result_digest(name):
    want = pinned()["results"][name]["digests"]
    got = run_digests(name)
    assert got["all"] == want["all"], _differences(name, got, want)


@pytest.mark.parametrize("name", REFERENCE)
def test_reference_engine_digest(name):
    """The reference agents give the pinned digest too (a subset: they are slower)."""
    want = pinned()["results"][name]["digests"]
    got = run_digests(name, engine="reference")
    assert got["all"] == want["all"], "reference engine: " + _differences(name, got, want)


@pytest.mark.parametrize("preset", PRESETS)
def test_preset_task_ids(preset):
    want = pinned()["presets"][preset]
    ids = task_ids(preset)
    if list_digest(ids) != want["sha256"]:
        gone = sorted(set(want["task_ids"]) - set(ids))
        new = sorted(set(ids) - set(want["task_ids"]))
        pytest.fail(
            f"preset {preset!r}: task ids changed ({len(ids)} now, {len(want['task_ids'])} pinned); "
            f"gone: {gone[:10]}{' ...' if len(gone) > 10 else ''}; "
            f"new: {new[:10]}{' ...' if len(new) > 10 else ''}"
        )
