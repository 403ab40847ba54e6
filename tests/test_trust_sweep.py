"""Sweep results a researcher can trust (issue 12): no stale or mixed tasks, every axis a column,
frontiers keyed by configuration, labels not paths, the whole grid checked first, and every
output problem one line, exit 2, nothing finished destroyed."""

import dataclasses
import errno
import hashlib
import json
import os
import pathlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mamab.agents import AlgorithmParams
from mamab.cli import main
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.experiments import load_spec, provenance
from mamab.experiments.aggregate import (
    CONFIG_COLUMNS,
    ConfigResult,
    read_curves,
    tasks_of,
    write_tables,
)
from mamab.experiments.report import frontier_lines
from mamab.experiments.runner import run_sweep
from mamab.experiments.spec import parse_spec
from mamab.experiments.tasks import (
    KEYED_FIELDS,
    KEYED_PARAMS,
    OK,
    config_id,
    inspect_task,
    read_task_file,
)
from mamab.plots import pareto
from mamab.result import COUNTERS
from mamab.storage import atomic_write

RING = "".join(f"{i} {(i + 1) % 6}\n" for i in range(6))
LINE = "".join(f"{i} {i + 1}\n" for i in range(5))


def graph_spec(edges: str, name: str = "g") -> str:
    return f"""
name = "{name}"
seed = 1
runs = 4
runs_per_task = 2
grid_points = 10

[[experiments]]
name = "file"
algorithms = ["lcc-ucb-graph", "no-communication"]
agents = 6
arms = 12
horizon = 300
graph = "{edges}"

[[experiments]]
name = "named"
algorithms = "lcc-ucb"
agents = 3
arms = 9
horizon = 300
"""


def write_spec(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def one_line_exit_2(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def rows(out: Path) -> list[dict[str, str]]:
    import csv

    with open(out / "summary.csv", newline="") as f:
        return list(csv.DictReader(f))


# -- item 1 and 2: stale graph files and other code are never reused ---------------------------


def test_edited_graph_file_and_new_code_give_fresh_results(tmp_path, monkeypatch, capsys):
    edges = tmp_path / "edges.txt"
    edges.write_text(RING)
    spec_file = write_spec(tmp_path, graph_spec(edges.as_posix()))
    out = tmp_path / "out"
    first = run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    assert first.tasks_run == 6
    old = {r["algorithm"]: r for r in rows(out)}
    assert old["lcc-ucb-graph"]["diameter_median"] == "3"  # a ring of 6
    tasks = tasks_of(load_spec(spec_file))
    named = [t for t in tasks if t.experiment == "named"]
    on_file = [t for t in tasks if t.experiment == "file"]
    named[0].path(out).unlink()  # an interrupted sweep: two tasks never finished
    on_file[0].path(out).unlink()
    edges.write_text(LINE)  # the same path, another graph
    with pytest.raises(ConfigError, match=r"graph file .*edges\.txt"):  # not silently replaced
        run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    (out / "metadata.json").unlink()  # the explicit consent to replace the tables
    monkeypatch.setattr(provenance, "code_fingerprint", lambda: "0123456789abcdef")  # new code
    capsys.readouterr()
    again = run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    assert (again.tasks_run, again.tasks_skipped, again.tasks_other_code) == (6, 0, 1)
    assert "1 tasks from other code recomputed" in capsys.readouterr().err
    clean = tmp_path / "clean"
    run_sweep(load_spec(spec_file), clean, jobs=1, progress=False)
    assert (out / "summary.csv").read_bytes() == (clean / "summary.csv").read_bytes()
    new = {r["algorithm"]: r for r in rows(out)}
    assert new["lcc-ucb-graph"]["diameter_median"] == "5"  # the line: fresh, not the old ring
    assert new["lcc-ucb-graph"]["graph_sha256"] == hashlib.sha256(LINE.encode()).hexdigest()
    assert new["lcc-ucb-graph"]["config_id"] != old["lcc-ucb-graph"]["config_id"]
    assert new["lcc-ucb"]["config_id"] == old["lcc-ucb"]["config_id"]  # named graph: same id
    for task in tasks_of(load_spec(spec_file)):  # every file the tables use: the new code's
        meta, _ = read_task_file(task.path(out))
        assert meta["provenance"]["code"] == "0123456789abcdef"


def test_same_relative_graph_path_in_another_directory_is_not_reused(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "edges.txt").write_text(RING)
    (b / "edges.txt").write_text(LINE)
    spec_file = write_spec(tmp_path, graph_spec("edges.txt"))
    out = tmp_path / "out"
    monkeypatch.chdir(a)
    assert run_sweep(load_spec(spec_file), out, jobs=1, progress=False).tasks_run == 6
    monkeypatch.chdir(b)
    (out / "metadata.json").unlink()  # another graph: the tables are replaced only on consent
    again = run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    assert (again.tasks_run, again.tasks_skipped) == (4, 2)  # only the named-graph tasks reused
    monkeypatch.chdir(a)
    (out / "metadata.json").unlink()
    assert run_sweep(load_spec(spec_file), out, jobs=1, progress=False).tasks_run == 0


def test_ids_of_named_graph_configurations_are_unchanged():
    """The id rule before issue 12: sha256 of the config (first_run 0, no delay key if 0)."""

    def old_id(config: Config) -> str:
        fields = dataclasses.replace(config, first_run=0).to_dict()
        if fields["delay"] == 0:
            del fields["delay"]
        # fields added since (edges, plugin parameters, ...) are left out of ids at their default
        fields = {k: v for k, v in fields.items() if k in KEYED_FIELDS or k == "delay"}
        fields["params"] = {k: v for k, v in fields["params"].items() if k in KEYED_PARAMS}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]

    for config in (
        Config("lcc-ucb", 3, 9, 100, runs=4),
        Config("gosine", 4, 20, 500, graph="ring", loss=0.5, delay=0.25, seed=7),
        Config("demab", 2, 8, 50, params=AlgorithmParams(alpha=3.0), crash_rate=0.01),
    ):
        assert config_id(config) == old_id(config)


def test_task_files_and_metadata_record_provenance(tmp_path):
    spec_file = write_spec(tmp_path, graph_spec((tmp_path / "e.txt").as_posix()))
    (tmp_path / "e.txt").write_text(RING)
    out = tmp_path / "out"
    run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    expected = provenance.current_provenance()
    assert set(expected) == {"mamab", "numpy", "numba", "code"} and len(expected["code"]) == 16
    for path in (out / "tasks").glob("*.npz"):
        meta, _ = read_task_file(path)
        assert meta["provenance"] == expected and meta["format"] == 1
    metadata = json.loads((out / "metadata.json").read_text())
    assert metadata["provenance"] == {**expected, "format": 1}
    assert metadata["tasks"].startswith("all 6 task files share this provenance")
    digest = hashlib.sha256(RING.encode()).hexdigest()
    assert metadata["graph_files"] == {(tmp_path / "e.txt").as_posix(): digest}


def test_code_fingerprint_covers_the_numbers_not_the_presentation():
    names = {p.relative_to(p.parents[1]).as_posix() for p in provenance.counted_sources()}
    for needed in (
        "lcc/kernel.py",
        "lcc/agent.py",
        "mamab/problem.py",
        "mamab/topology.py",
        "mamab/faults.py",
        "mamab/seeding.py",
        "mamab/simulate.py",
        "experiments/tasks.py",
    ):
        assert needed in names
    for presentation in (
        "mamab/cli.py",
        "mamab/plots.py",
        "mamab/figure_text.py",
        "experiments/report.py",
    ):
        assert presentation not in names


def test_sweep_into_another_sweeps_directory_is_refused(tmp_path, capsys):
    (tmp_path / "e.txt").write_text(RING)
    a = write_spec(tmp_path, graph_spec((tmp_path / "e.txt").as_posix(), "a"), "a.toml")
    b = write_spec(tmp_path, graph_spec((tmp_path / "e.txt").as_posix(), "b"), "b.toml")
    out = tmp_path / "out"
    run_sweep(load_spec(a), out, jobs=1, progress=False)
    before = snapshot(out)
    err = one_line_exit_2(["sweep", str(b), "--out", str(out), "--jobs", "1"], capsys)
    assert "holds the tables of sweep 'a'" in err and "metadata.json" in err
    assert snapshot(out) == before
    (out / "metadata.json").unlink()  # the documented, explicit way to let b replace the tables
    outcome = run_sweep(load_spec(b), out, jobs=1, progress=False)
    assert outcome.tasks_run == 0  # same configurations: a's task files are reused
    assert json.loads((out / "metadata.json").read_text())["spec"]["name"] == "b"


# -- item 3: every axis a column; panels and the frontier keyed by configuration ----------------

AXES = """
name = "axes"
runs = 3
runs_per_task = 3
grid_points = 8

[[experiments]]
name = "er"
algorithms = "lcc-ucb"
agents = 3
arms = 6
horizon = 200
graph = "erdos-renyi"
edge_prob = [0.5, 1.0]
loss = [0.0, 0.5]
"""


def test_every_varying_axis_is_a_column(tmp_path, capsys):
    out = tmp_path / "out"
    run_sweep(load_spec(write_spec(tmp_path, AXES)), out, jobs=1, progress=False)
    summary = rows(out)
    assert len(summary) == 4
    assert {(r["edge_prob"], r["loss"]) for r in summary} == {
        ("0.5", "0"),
        ("0.5", "0.5"),
        ("1", "0"),
        ("1", "0.5"),
    }
    assert len({r["config_id"] for r in summary}) == 4
    for name in ("curves.parquet", "finals.parquet"):
        table = pq.read_table(out / name)
        assert set(CONFIG_COLUMNS) <= set(table.column_names)
        pairs = {
            (c, e, q)
            for c, e, q in zip(
                *(table.column(k).to_pylist() for k in ("config_id", "edge_prob", "loss")),
                strict=True,
            )
        }
        assert len(pairs) == 4 and len({c for c, _, _ in pairs}) == 4
    back = read_curves(out)
    assert sorted((r.config["edge_prob"], r.config["loss"]) for r in back) == [
        (0.5, 0.0),
        (0.5, 0.5),
        (1.0, 0.0),
        (1.0, 0.5),
    ]
    with pytest.raises(SystemExit) as done:
        main(["frontier", str(out)])
    text = capsys.readouterr().out
    assert done.value.code == 0
    for title in (
        "G(N, p = 0.5), loss q = 0",
        "G(N, p = 1), loss q = 0.5",
    ):  # one panel per setting
        assert title in text


def test_summary_is_byte_stable_for_the_same_seed(tmp_path):
    spec = load_spec(write_spec(tmp_path, AXES))
    run_sweep(spec, tmp_path / "one", jobs=1, progress=False)
    run_sweep(spec, tmp_path / "two", jobs=2, progress=False)
    assert (tmp_path / "one" / "summary.csv").read_bytes() == (
        tmp_path / "two" / "summary.csv"
    ).read_bytes()


def synthetic(algorithm: str, alpha: float | None, regret: float, bits: float) -> ConfigResult:
    """A configuration whose every run ends with ``regret`` per agent after sending ``bits``."""
    config = Config(algorithm, 2, 4, 100, runs=5, params=AlgorithmParams(alpha=alpha))
    runs, agents = 5, 2
    counters = np.zeros((len(COUNTERS), runs, agents))
    counters[COUNTERS.index("bits_sent")] = bits
    return ConfigResult(
        experiment="e",
        figure="f",
        config_id=config_id(config),
        config=config.to_dict(),
        grid=np.array([1, 100]),
        regret=np.full((runs, 2), regret),
        bits=np.full((runs, 2), bits),
        final_regret=np.full((runs, agents), regret),
        counters=counters,
        diameter=np.ones(runs, dtype=np.int64),
        max_degree=np.ones(runs, dtype=np.int64),
        crash=np.full((runs, agents), 101),
    )


def test_a_dominated_configuration_is_never_on_the_frontier(tmp_path, capsys):
    results = [
        synthetic("lcc-ucb", 1.0, regret=10.0, bits=5.0),
        synthetic("lcc-ucb", 4.0, regret=20.0, bits=8.0),  # dominated by alpha=1 on both counts
        synthetic("no-communication", None, regret=30.0, bits=0.0),
    ]
    out = tmp_path / "out"
    out.mkdir()
    write_tables(results, out)
    with pytest.raises(SystemExit) as done:
        main(["frontier", str(out)])
    assert done.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    marks = {
        label: line.rstrip().endswith("yes")
        for line in lines
        for label in ("LCC-UCB (α = 1)", "LCC-UCB (α = 4)", "no communication")
        if line.strip().startswith(label)
    }
    assert marks == {
        "LCC-UCB (α = 1)": True,
        "LCC-UCB (α = 4)": False,
        "no communication": True,
    }
    (line,) = frontier_lines(read_curves(out))
    assert "LCC-UCB (α = 1)" in line and "α = 4" not in line


POINT = st.tuples(st.integers(0, 5).map(float), st.integers(0, 5).map(float))


@settings(max_examples=200, deadline=None)
@given(st.lists(POINT, min_size=1, max_size=8))
def test_pareto_is_exactly_the_undominated_points(coords):
    points = [("same-name", b, r, r, r) for b, r in coords]  # one name: keyed by position

    def dominated(i: int) -> bool:
        b, r = coords[i]
        return any(b2 <= b and r2 <= r and (b2, r2) != (b, r) for b2, r2 in coords)

    assert pareto(points) == {i for i in range(len(coords)) if not dominated(i)}


# -- item 9: labels, the whole grid first, umask -------------------------------------------------

BASE = {"algorithms": "lcc-ucb", "agents": 2, "arms": 4, "horizon": 20}


@pytest.mark.parametrize(
    "bad", ["../../escape", "a/b", "a\\b", "..", ".", "", "x\x00y", "tab\there", "n" * 101]
)
@pytest.mark.parametrize("where", ["name", "experiments[0].name", "experiments[0].figure"])
def test_names_are_labels_not_paths(bad, where):
    if where == "name":
        data = {"name": bad, "experiments": [BASE]}
    else:
        data = {"experiments": [{**BASE, where.split(".")[1]: bad}]}
    with pytest.raises(ConfigError, match=r"is a label, not a path") as err:
        parse_spec(data, "s.toml")
    assert f"s.toml: {where}" in str(err.value) and "\n" not in str(err.value)


def test_escaping_name_creates_nothing(tmp_path, monkeypatch, capsys):
    work = tmp_path / "deep" / "er"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    spec = write_spec(
        work,
        'name = "../../escape"\n[[experiments]]\nalgorithms = "lcc-ucb"\n'
        "agents = 2\narms = 4\nhorizon = 20\n",
    )
    err = one_line_exit_2(["sweep", str(spec)], capsys)
    assert "name" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["deep", "er", "spec.toml"]


def test_the_whole_grid_is_checked_before_any_task_runs(tmp_path, capsys):
    text = (
        "[[experiments]]\nalgorithms = 'lcc-ucb'\nagents = 2\narms = 4\nhorizon = 20\n"
        "[[experiments]]\nalgorithms = 'no-communication'\nagents = 30\narms = 4\nhorizon = 20\n"
        "graph = 'erdos-renyi'\nedge_prob = [0.5, 0.001]\n"
    )
    spec = write_spec(tmp_path, text)
    out = tmp_path / "out"
    err = one_line_exit_2(["sweep", str(spec), "--out", str(out)], capsys)
    assert (
        "experiments[1].edge_prob" in err and "raise edge_prob" in err and "--edge-prob" not in err
    )
    assert not out.exists()  # nothing ran, nothing was written


@pytest.mark.parametrize(
    ("edges", "agents", "algorithm", "needle"),
    [
        ("0 1\n1 5\n", "[8, 4]", "no-communication", "agent 5 outside 0..3"),
        ("0 1\n2 3\n", "4", "lcc-ucb-graph", "needs a connected graph"),
    ],
)
def test_graph_files_are_checked_for_every_size_first(
    tmp_path, capsys, edges, agents, algorithm, needle
):
    (tmp_path / "e.txt").write_text(edges)
    text = (
        f"[[experiments]]\nalgorithms = '{algorithm}'\nagents = {agents}\narms = 8\nhorizon = 20\n"
        f"graph = '{(tmp_path / 'e.txt').as_posix()}'\n"
    )
    out = tmp_path / "out"
    err = one_line_exit_2(["sweep", str(write_spec(tmp_path, text)), "--out", str(out)], capsys)
    assert "experiments[0].graph" in err and needle in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (
            {
                "experiments": [
                    {
                        **BASE,
                        "agents": list(range(2, 102)),
                        "arms": list(range(200, 300)),
                        "horizon": list(range(20, 40)),
                    }
                ]
            },
            "over 100000 configurations",
        ),
        ({"runs": 10**8, "runs_per_task": 1, "experiments": [BASE]}, "raise runs_per_task"),
    ],
)
def test_absurd_grids_are_refused_before_expanding(data, needle):
    with pytest.raises(ConfigError, match=needle):
        parse_spec(data, "s.toml")


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_writes_honour_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        path = tmp_path / f"f{mask:o}"
        atomic_write(path, lambda tmp: tmp.write_text("x"))
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_sweep_outputs_honour_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        run_sweep(load_spec(write_spec(tmp_path, AXES)), tmp_path / "out", jobs=1, progress=False)
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o777 == 0o644 for p in files)


# -- item 7: output problems, one line, nothing destroyed ----------------------------------------

SMALL = """
name = "small"
runs = 4
runs_per_task = 2
grid_points = 8
[[experiments]]
algorithms = ["lcc-ucb", "no-communication"]
agents = 2
arms = 4
horizon = 100
"""


@pytest.fixture
def done_sweep(tmp_path):
    spec_file = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    return spec_file, out


def no_temporaries(out: Path) -> bool:
    return not [p for p in out.rglob("*") if p.name.endswith(".tmp") or ".mamab-probe" in p.name]


def test_read_only_sweep_directory(done_sweep, monkeypatch, capsys):
    spec_file, out = done_sweep
    (out / "tasks" / sorted(os.listdir(out / "tasks"))[0]).unlink()  # work left to do
    before = snapshot(out)
    if os.geteuid() == 0:  # root writes anywhere: make the probe meet a read-only directory
        import tempfile

        real = tempfile.mkstemp

        def refuse(*args, dir=None, **kwargs):
            if dir is not None and Path(dir).resolve() in (
                out.resolve(),
                (out / "tasks").resolve(),
            ):
                raise PermissionError(errno.EACCES, "Permission denied")
            return real(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        err = one_line_exit_2(["sweep", str(spec_file), "--out", str(out)], capsys)
    else:
        os.chmod(out, 0o555)
        try:
            err = one_line_exit_2(["sweep", str(spec_file), "--out", str(out)], capsys)
        finally:
            os.chmod(out, 0o755)
    assert "Permission denied" in err
    assert snapshot(out) == before


def test_task_path_that_is_a_directory(tmp_path, capsys):
    spec_file = write_spec(tmp_path, SMALL)
    out = tmp_path / "out"
    task = tasks_of(load_spec(spec_file))[1]
    task.path(out).mkdir(parents=True)
    (task.path(out) / "keep").write_text("mine")
    err = one_line_exit_2(["sweep", str(spec_file), "--out", str(out)], capsys)
    assert "is not a regular file" in err
    assert not [p for p in (out / "tasks").glob("*.npz") if p.is_file()]  # failed before computing
    assert (task.path(out) / "keep").read_text() == "mine"


@pytest.mark.parametrize("drop", ["crash", "counters", "grid"])
def test_task_file_missing_an_array_is_recomputed(done_sweep, drop):
    spec_file, out = done_sweep
    reference = (out / "summary.csv").read_bytes()
    path = sorted((out / "tasks").glob("*.npz"))[0]
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files if k != drop}
    np.savez(path, **arrays)  # np.savez keeps the name: it ends in .npz
    again = run_sweep(load_spec(spec_file), out, jobs=1, progress=False)
    assert (again.tasks_run, again.tasks_other_code) == (1, 0)
    assert (out / "summary.csv").read_bytes() == reference


def test_wrong_parquet_schema_is_one_line(done_sweep, capsys):
    _, out = done_sweep
    good = pq.read_table(out / "curves.parquet")
    pq.write_table(pa.table({"a": [1, 2]}), out / "curves.parquet")
    for command in ("plot", "frontier"):
        err = one_line_exit_2([command, str(out)], capsys)
        assert "not a mamab sweep table" in err and "curves.parquet" in err
    broken = good.set_column(good.column_names.index("run"), "run", pa.array(["x"] * good.num_rows))
    pq.write_table(broken, out / "curves.parquet")
    err = one_line_exit_2(["plot", str(out)], capsys)
    assert "do not fit together" in err
    pq.write_table(good.slice(0, good.num_rows - 3), out / "curves.parquet")  # rows missing
    err = one_line_exit_2(["frontier", str(out)], capsys)
    assert "do not fit together" in err


def enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_full_disk_while_writing_a_task(done_sweep, monkeypatch, capsys):
    spec_file, out = done_sweep
    sorted((out / "tasks").glob("*.npz"))[0].unlink()
    before = snapshot(out)
    monkeypatch.setattr(pathlib.Path, "write_bytes", enospc)
    err = one_line_exit_2(["sweep", str(spec_file), "--out", str(out), "--jobs", "1"], capsys)
    assert "No space left on device" in err and ".npz" in err
    assert snapshot(out) == before and no_temporaries(out)


def test_full_disk_while_writing_a_table(done_sweep, monkeypatch, capsys):
    spec_file, out = done_sweep
    before = snapshot(out)
    monkeypatch.setattr(pq, "write_table", enospc)
    err = one_line_exit_2(["sweep", str(spec_file), "--out", str(out), "--jobs", "1"], capsys)
    assert "No space left on device" in err and "curves.parquet" in err
    after = snapshot(out)
    assert {k: v for k, v in after.items() if k != "metadata.json"} == {
        k: v for k, v in before.items() if k != "metadata.json"
    }
    assert no_temporaries(out)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_damaged_task_files_are_recomputed_or_refused_in_one_line(done_sweep, data):
    spec_file, out = done_sweep
    task = tasks_of(load_spec(spec_file))[0]
    path = task.path(out)
    original = path.read_bytes()
    try:
        content = bytearray(original)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(content) - 1))
            content[i] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(content)))
        path.write_bytes(bytes(content[:cut]))
        try:
            status, arrays = inspect_task(task, out)
        except ConfigError as err:
            assert "\n" not in str(err)
        else:
            assert (status == OK) == (arrays is not None)
    finally:
        path.write_bytes(original)
