"""docs/extending.md runs as written: its files, its Python, its conformance test, its commands.

The plugin is built from the page's files in a temporary directory and installed with pip
(``--target`` a temporary directory put on PYTHONPATH: the interpreter is shared, so nothing is
installed into it and nothing needs uninstalling), then found through its entry point by fresh
``mamab`` processes.
"""

from __future__ import annotations

import csv
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mamab import ReferenceEngineWarning
from mamab.algorithms import registry

PAGE = (Path(__file__).parents[1] / "docs" / "extending.md").read_text()
PART_ONE, _, PART_TWO = PAGE.partition("\n# Part 2:")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", PART_ONE, re.S)
BLOCKS_TWO = re.findall(r"```(\w+)\n(.*?)```", PART_TWO, re.S)
FILES = {
    body.splitlines()[0].removeprefix("# file: ").strip(): body
    for _, body in BLOCKS + BLOCKS_TWO
    if body.startswith("# file: ")
}


def _snippets(blocks):
    return [body for lang, body in blocks if lang == "python" and not body.startswith("# file: ")]


def _commands(blocks):
    return [
        line.strip()
        for lang, body in blocks
        if lang == "bash"
        for line in body.splitlines()
        if line.strip().startswith("mamab ")
    ]


SNIPPETS, SNIPPETS_TWO = _snippets(BLOCKS), _snippets(BLOCKS_TWO)
COMMANDS, COMMANDS_TWO = _commands(BLOCKS), _commands(BLOCKS_TWO)
SRC = str(Path(__file__).parents[1] / "src")


@pytest.fixture
def tutorial(tmp_path: Path) -> Path:
    """The page's files, written where it says."""
    for name, body in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return tmp_path


def _env(*paths: Path | str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), SRC])}


def test_page_has_the_two_files_and_the_steps():
    assert {
        "eps_greedy/agent.py",
        "eps_greedy/__init__.py",
        "pyproject.toml",
        "test_eps_greedy.py",
        "eps-vs-lcc.toml",
    } <= set(FILES)
    assert SNIPPETS and any(c.startswith("mamab sweep") for c in COMMANDS)
    assert any(c.startswith("mamab plot") for c in COMMANDS)


def test_python_snippets_run_in_process(tutorial, monkeypatch):
    monkeypatch.chdir(tutorial)
    monkeypatch.syspath_prepend(str(tutorial))
    registry._announced.discard("eps-greedy")
    try:
        namespace: dict = {}
        with pytest.warns(ReferenceEngineWarning, match="eps-greedy has no fast kernel"):
            for snippet in SNIPPETS:
                exec(compile(snippet, "docs/extending.md", "exec"), namespace)
        assert namespace["result"].engine == "reference"
        assert namespace["result"].final_regret.shape == (4, 5)
        assert registry.lookup("eps-greedy").parameters == ("epsilon",)
    finally:
        if "eps-greedy" in registry._registry:
            registry.unregister_algorithm("eps-greedy")
        registry._announced.discard("eps-greedy")
        for name in [m for m in sys.modules if m == "eps_greedy" or m.startswith("eps_greedy.")]:
            del sys.modules[name]


def test_conformance_file_passes(tutorial):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_eps_greedy.py"],
        cwd=tutorial,
        env=_env(tutorial),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "10 passed" in done.stdout


def _pip_install(package: Path, target: Path) -> None:
    """Install ``package`` into ``target``, without build isolation if the environment can."""
    base = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target)]
    tries = [[*base, "--no-build-isolation", str(package)], [*base, str(package)]]
    errors = []
    for command in tries:  # an old setuptools without bdist_wheel needs the isolated build
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            return
        errors.append(done.stderr.strip().splitlines()[-1:] or ["?"])
    pytest.skip(f"cannot build the plugin here: {errors}")


def test_installed_plugin_found_through_its_entry_point(tutorial):
    site = tutorial / "site"
    _pip_install(tutorial, site)
    assert (site / "eps_greedy" / "agent.py").is_file()
    work = tutorial / "work"  # the commands run away from the sources: only the install counts
    work.mkdir()
    (work / "eps-vs-lcc.toml").write_text(FILES["eps-vs-lcc.toml"])
    env = _env(site)
    outputs = {}
    for command in COMMANDS:
        args = shlex.split(command, comments=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mamab",
                *args[1:],
                *(["--jobs", "2"] if args[1] == "sweep" else []),
            ],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
        outputs[args[1]] = done
    listing = outputs["algorithms"].stdout
    assert re.search(r"^eps-greedy +reference +no +yes +no +epsilon-greedy", listing, re.M)
    assert "mamab-eps-greedy 0.1.0" in listing
    run = outputs["run"]
    assert re.search(r"^eps-greedy +\d", run.stdout, re.M)
    assert run.stderr.strip().splitlines() == [
        "mamab: note: eps-greedy has no fast kernel: it runs on the reference engine (same results, slower)"
    ]
    sweep = outputs["sweep"]
    for epsilon in ("0.05", "0.2"):  # the plugin's own parameter is an axis and a label
        assert re.search(
            rf"^eps-greedy +eps-greedy .* extra\.epsilon={epsilon}$", sweep.stdout, re.M
        )
    assert re.search(r"^lcc-ucb +lcc-ucb ", sweep.stdout, re.M)
    assert sweep.stderr.count("no fast kernel") == 1  # said once, not once per worker
    results = work / "eps-vs-lcc-results"
    with (results / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["algorithm"], r["extra.epsilon"]) for r in rows] == [
        ("eps-greedy", "0.05"),
        ("eps-greedy", "0.2"),
        ("lcc-ucb", ""),
    ]
    assert (results / "figures" / "eps-vs-lcc-regret.png").stat().st_size > 0
    assert "eps-vs-lcc-regret.png" in outputs["plot"].stdout
    frontier = outputs["frontier"].stdout
    assert re.search(r"^  eps-greedy \(epsilon = 0\.05\) +0 ", frontier, re.M)  # no bits sent
    assert re.search(r"^  eps-greedy \(epsilon = 0\.2\) +0 ", frontier, re.M)


# -- part 2: an algorithm with its own numba kernel, installed as a package ---------------------


def test_part_two_has_the_package_and_the_steps():
    assert {
        "moss/moss_bandit/agent.py",
        "moss/moss_bandit/kernel.py",
        "moss/moss_bandit/driver.py",
        "moss/moss_bandit/__init__.py",
        "moss/pyproject.toml",
        "moss/test_moss.py",
        "moss-vs-lcc.toml",
    } <= set(FILES)
    assert any(c.startswith("mamab sweep moss-vs-lcc.toml") for c in COMMANDS_TWO)
    assert len(SNIPPETS_TWO) == 1 and "agent-steps/s" in SNIPPETS_TWO[0]


def test_kernel_plugin_installed_runs_fast_and_agrees(tutorial):
    site = tutorial / "site-moss"
    _pip_install(tutorial / "moss", site)
    assert (site / "moss_bandit" / "kernel.py").is_file()
    env = _env(site)
    # the package's own test file: conformance, and fast == reference through the entry point
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_moss.py"],
        cwd=tutorial / "moss",
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "11 passed" in done.stdout
    work = tutorial / "work-moss"
    work.mkdir()
    (work / "moss-vs-lcc.toml").write_text(FILES["moss-vs-lcc.toml"])
    outputs = {}
    for command in COMMANDS_TWO:
        args = shlex.split(command, comments=True)
        if args[1] == "run":  # a shorter horizon than the page's: the test only runs it
            args[args.index("-T") + 1] = "3000"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mamab",
                *args[1:],
                *(["--jobs", "2"] if args[1] == "sweep" else []),
            ],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
        outputs[args[1]] = done
    assert re.search(r"^moss +fast +no +no +no +MOSS", outputs["algorithms"].stdout, re.M)
    assert re.search(r"^moss +\d", outputs["run"].stdout, re.M)
    for name in ("run", "sweep"):
        assert "reference engine" not in outputs[name].stderr, outputs[name].stderr
    with (work / "moss-vs-lcc-results" / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["algorithm"] for r in rows) == ["lcc-ucb", "moss", "no-communication"]


def test_part_two_speed_snippet_runs(tutorial, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tutorial / "moss"))
    import moss_bandit

    registry.register(moss_bandit.SPEC)
    try:
        snippet = SNIPPETS_TWO[0].replace("100_000", "3_000").replace("2_000", "300")
        exec(compile(snippet, "docs/extending.md", "exec"), {})
        # the plugin's kernel is cached under mamab's fingerprint with the plugin's folded in
        from mamab import kernel_cache

        where = kernel_cache.directory(registry.plugin_fingerprint("moss")["code"])
        assert any(p.name.startswith("kernel.moss_chunk") for p in where.rglob("*")), where
    finally:
        registry.unregister_algorithm("moss")
        for name in [m for m in sys.modules if m == "moss_bandit" or m.startswith("moss_bandit.")]:
            del sys.modules[name]
    printed = capsys.readouterr().out
    assert re.search(r"^moss +fast +[\d,]+ agent-steps/s$", printed, re.M)
    assert re.search(r"^lcc-ucb +reference +[\d,]+ agent-steps/s$", printed, re.M)
