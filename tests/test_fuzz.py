"""Fuzzing the command line and the sweep loader: exit 0 or a one-line error with exit 2, never
a traceback, and nothing in the output directory changed by a failed command."""

import hashlib
import json
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mamab.cli import main
from mamab.errors import ConfigError
from mamab.experiments.spec import parse_spec

FLAGS = [
    "--algorithm",
    "--agents",
    "--arms",
    "--horizon",
    "--runs",
    "--seed",
    "--graph",
    "--edge-prob",
    "--reward",
    "--sigma",
    "--alpha",
    "--engine",
    "--grid-points",
    "--loss",
    "--delay",
    "--jobs",
    "--crash-rate",
    "--recover-after",
]
JUNK = st.one_of(
    st.integers(-5, 40).map(str),
    st.integers(2**60, 2**70).map(str),  # int64 limits: refused or exact, never wrapped
    st.sampled_from(["1e20", "1e308", "1e-320", "inf", "-inf", "nan", "1"]),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(
        ["lcc-ucb", "demab", "gosine", "ring", "erdos-renyi", "gaussian", "fast", "", "-", "0x1"]
    ),
    st.text(string.printable, max_size=6),
)


def snapshot(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pairs=st.lists(st.tuples(st.sampled_from(FLAGS), JUNK), max_size=4))
def test_cli_run_never_crashes(pairs, capsys):
    args = ["run", "--algorithm", "lcc-ucb", "-N", "2", "-K", "4", "-T", "30", "--runs", "1"]
    for flag, value in pairs:
        args += [flag, value]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (out / "summary.json").write_text('{"keep": true}\n')
        before = snapshot(out)
        with pytest.raises(SystemExit) as done:
            main([*args, "--out", str(out)])
        err = capsys.readouterr().err
        assert done.value.code in (0, 2)
        assert "Traceback" not in err
        if done.value.code == 2:
            assert len(err.strip().splitlines()) == 1 and err.startswith("mamab: error:")
            assert snapshot(out) == before  # a failed command changes nothing
        else:  # strict RFC 8259: no NaN or Infinity token
            for name in ("summary.json", "metadata.json"):
                json.loads((out / name).read_text(), parse_constant=_refuse)


def _refuse(token: str) -> None:
    raise AssertionError(f"non-standard JSON token {token}")


VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 30),
        st.floats(allow_nan=False),
        st.text(max_size=5),
    ),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=4,
)
KEYS = [
    "algorithms",
    "agents",
    "arms",
    "horizon",
    "graph",
    "edge_prob",
    "reward",
    "sigma",
    "alpha",
    "loss",
    "delay",
    "name",
    "figure",
    "bogus",
]


@settings(max_examples=200, deadline=None)
@given(
    top=st.dictionaries(
        st.sampled_from(["name", "seed", "runs", "runs_per_task", "grid_points", "extra"]),
        VALUES,
        max_size=3,
    ),
    block=st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=6),
)
def test_spec_loader_raises_only_config_errors(top, block):
    data = {
        **top,
        "experiments": [{"algorithms": "lcc-ucb", "agents": 2, "arms": 4, "horizon": 10, **block}],
    }
    try:
        spec = parse_spec(data, "fuzz")
    except ConfigError as err:
        assert "\n" not in str(err)
    else:
        assert spec.configs and all(c.horizon >= 1 for _, c in spec.configs)


def test_result_files_of_another_format_are_refused(tmp_path, capsys):
    import io
    import json

    import numpy as np

    from mamab.experiments.aggregate import tasks_of
    from mamab.experiments.spec import parse_spec as parse

    spec_text = 'name = "v"\nruns = 1\n[[experiments]]\nalgorithms = "lcc-ucb"\nagents = 2\narms = 4\nhorizon = 20\n'
    (tmp_path / "v.toml").write_text(spec_text)
    task = tasks_of(
        parse(
            {
                "name": "v",
                "runs": 1,
                "experiments": [{"algorithms": "lcc-ucb", "agents": 2, "arms": 4, "horizon": 20}],
            }
        )
    )[0]
    path = task.path(tmp_path / "out")
    path.parent.mkdir(parents=True)
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.array(json.dumps({"format": 99, "config": task.config.to_dict()})))
    path.write_bytes(buffer.getvalue())
    with pytest.raises(SystemExit) as done:
        main(["sweep", str(tmp_path / "v.toml"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "format 99" in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == buffer.getvalue()  # refused, not overwritten
