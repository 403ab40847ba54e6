"""Compiled kernels are cached per code fingerprint (issue 20, item 1): changed sources recompile.

numba's own cache checks only the file of the cached function; a kernel inlining a constant of
another module (``GOLDEN`` in faults.py) would otherwise be loaded stale.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import mamab
from mamab import kernel_cache
from mamab.fingerprint import code_fingerprint, fingerprint_of

PACKAGE = Path(mamab.__file__).parent
GOLDEN = "0x9E3779B97F4A7C15"


def copy_package(tmp_path: Path) -> Path:
    """A copy of the mamab sources (no compiled files) under ``tmp_path/src``; returns src."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "mamab", ignore=shutil.ignore_patterns("__pycache__"))
    return src


def edit_golden(src: Path) -> None:
    faults = src / "mamab" / "faults.py"
    text = faults.read_text()
    assert GOLDEN in text
    faults.write_text(text.replace(GOLDEN, "0x9E3779B97F4A7C17"))


def run_python(code: str, src: Path, cache: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(src), "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=src.parent
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_key_follows_every_counted_source(tmp_path):
    src = copy_package(tmp_path)
    assert fingerprint_of(src / "mamab") == code_fingerprint()
    edit_golden(src)
    assert fingerprint_of(src / "mamab") != code_fingerprint()
    # a plugin's fingerprint folds in: another key per plugin code, the built-ins' key unchanged
    assert kernel_cache.key() == code_fingerprint()
    assert len({kernel_cache.key(), kernel_cache.key("a" * 16), kernel_cache.key("b" * 16)}) == 3
    assert kernel_cache.key("a" * 16) == kernel_cache.key("a" * 16)


def test_the_directory_respects_numba_cache_dir_and_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert kernel_cache.directory() == tmp_path / "numba" / "mamab" / code_fingerprint()
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kernel_cache.directory() == tmp_path / "xdg" / "mamab" / "kernels" / code_fingerprint()
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: absolute paths only
    assert kernel_cache.root() == Path.home() / ".cache" / "mamab" / "kernels"


def test_every_kernel_caches_under_the_fingerprint(tmp_path):
    """Every cached numba function of every module of mamab (the live network aside), whatever
    the import order, caches in one directory named by the code fingerprint (today's code:
    beside a hash of the source directory only); numba's global setting is left as it was."""
    code = (
        "import importlib, json, pkgutil, mamab\n"
        "from mamab.fingerprint import code_fingerprint\n"
        "paths = []\n"
        "names = [i.name for i in pkgutil.walk_packages(mamab.__path__, 'mamab.')\n"
        "         if not i.name.startswith(('mamab.live', 'mamab.__main__'))]\n"
        "for name in names:\n"
        "    for obj in vars(importlib.import_module(name)).values():\n"
        "        cache = getattr(obj, '_cache', None)\n"
        "        if getattr(cache, '_cache_path', None):\n"
        "            paths.append(cache._cache_path)\n"
        "from numba.core import config\n"
        "print(json.dumps([code_fingerprint(), paths, config.CACHE_DIR]))\n"
    )
    src = copy_package(tmp_path)
    fingerprint, paths, numba_default = json.loads(run_python(code, src, tmp_path / "cache"))
    assert len(paths) > 20
    expected = str(tmp_path / "cache" / "mamab" / fingerprint)
    assert all(p.startswith(expected + os.sep) for p in paths), paths[0]
    assert (Path(expected) / kernel_cache.STAMP).is_file()
    assert numba_default == str(tmp_path / "cache")  # numba's own setting, for other users: as set


def test_a_plugin_kernel_caches_under_its_own_key(tmp_path, monkeypatch):
    """What a plugin's kernel module will do (issue 19): decorate under mamab's fingerprint with
    its package's folded in; kernels decorated afterwards go back to the built-ins' directory."""
    from numba.core import config

    ours = kernel_cache.configure()  # the process's own, chosen before the environment changes
    numba_default = config.CACHE_DIR
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    plugin = "0123456789abcdef"
    with kernel_cache.caching_under(plugin) as where:
        assert where == tmp_path / "mamab" / kernel_cache.key(plugin) != kernel_cache.directory()

        @kernel_cache.njit(cache=True)
        def twice(x):
            return 2 * x

    @kernel_cache.njit(cache=True)
    def thrice(x):
        return 3 * x

    assert twice._cache._cache_path.startswith(str(where) + os.sep)
    assert thrice._cache._cache_path.startswith(str(ours) + os.sep)
    assert numba_default == config.CACHE_DIR


def test_kernels_are_decorated_through_the_kernel_cache():
    """No module of mamab takes numba's own ``njit``/``jit`` (it would cache beside the sources,
    keyed on its own file only): every kernel uses :func:`mamab.kernel_cache.njit`."""
    direct = re.compile(r"from numba import [^\n]*\bn?jit\b|\bnumba\.n?jit\b|@jit\b")
    offenders = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name != "kernel_cache.py" and direct.search(p.read_text())
    ]
    assert offenders == []


def test_old_fingerprint_directories_are_pruned(tmp_path):
    now = time.time()
    ages = {f"{i:016x}": now - i * 2 * kernel_cache.IDLE for i in range(12)}  # 0: in use now
    for name, used in ages.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / kernel_cache.STAMP).touch()
        os.utime(tmp_path / name / kernel_cache.STAMP, (used, used))
    (tmp_path / "not-a-key").mkdir()  # a user's directory is never touched
    removed = kernel_cache.prune(tmp_path, keep=3)
    assert sorted(p.name for p in removed) == sorted(list(ages)[3:])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*list(ages)[:3], "not-a-key"])
    # recently used directories stay however many there are; the idle ones beyond 3 go
    for i in range(20, 30):
        (tmp_path / f"{i:016x}").mkdir()
    removed = kernel_cache.prune(tmp_path, keep=3)
    assert sorted(p.name for p in removed) == sorted(list(ages)[1:3])
    assert len(list(tmp_path.iterdir())) == 12


def test_an_unwritable_cache_directory_falls_back_to_a_temporary_one(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    where = kernel_cache._usable(lambda: blocker / "mamab" / "0123456789abcdef")
    assert where.is_dir() and where.name.startswith("mamab-kernels-")
    assert not where.is_relative_to(blocker)


@pytest.mark.slow
def test_an_edited_constant_recompiles_the_kernels_that_inline_it(tmp_path):
    """Issue 20 item 1, end to end: run LCC-UCB with message loss on a copy of the sources, edit
    ``GOLDEN`` in faults.py (inlined by the LCC kernel), rerun in a fresh process: the cache is
    cold again and the fast engine agrees with the reference engine on the edited code. Two cold
    compiles of the LCC kernel: about 25 s of CPU each (measured under load)."""
    code = (
        "import json, numpy as np\n"
        "from mamab import Config, simulate\n"
        "from mamab.engine.warmup import cold\n"
        "was_cold = cold(['lcc-ucb'])\n"
        "c = Config('lcc-ucb', agents=3, arms=4, horizon=300, loss=0.3, seed=1)\n"
        "fast, ref = simulate(c, engine='fast', jobs=1), simulate(c, engine='reference')\n"
        "print(json.dumps([was_cold, int(fast.counts['messages_lost'].sum()),\n"
        "                  int(ref.counts['messages_lost'].sum()),\n"
        "                  bool(np.array_equal(fast.regret, ref.regret))]))\n"
    )
    src, cache = copy_package(tmp_path), tmp_path / "cache"
    assert json.loads(run_python(code, src, cache)) == [True, 8, 8, True]
    edit_golden(src)
    # today's code loads the stale kernel: [False, 8, 9, False]
    assert json.loads(run_python(code, src, cache)) == [True, 9, 9, True]


def test_warmup_compiles_the_diameter_kernels_a_sparse_run_needs(tmp_path):
    """``mamab warmup`` once said "kernels ready" and the next sparse run compiled the exact
    diameter's kernels: a tiny ring never reaches that pass. Its ``graph diameter`` step does."""
    cache = tmp_path / "cache"
    warm = "from mamab.diameter import warm\nprint(warm())\n"
    assert run_python(warm, PACKAGE.parent, cache) == "30"
    before = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    assert any("_batch_eccentricities" in p.name for p in before)
    sparse = (
        "import networkx as nx\n"
        "from mamab.diameter import diameter\n"
        "a = nx.to_scipy_sparse_array(nx.erdos_renyi_graph(200, 0.05, seed=1), format='csr')\n"
        "print(diameter(a.indptr, a.indices))\n"
    )
    assert run_python(sparse, PACKAGE.parent, cache) == "4"
    after = {
        p: p.stat().st_mtime_ns
        for p in cache.rglob("*")
        if p.is_file() and p.name != kernel_cache.STAMP
    }
    assert after == {p: t for p, t in before.items() if p.name != kernel_cache.STAMP}


def test_warmup_ends_with_the_diameter_step():
    from mamab.engine.warmup import warmup_configs, warmup_steps

    labels = [label for label, _ in warmup_steps()]
    assert labels == [c.algorithm for c in warmup_configs()] + ["graph diameter"]


def test_warmup_runs_every_entry_kernel(monkeypatch):
    """The warm-up configurations reach every kernel a driver feeds blocks to: each kernel
    module's, both of the LCC family's (for small sets and for wide ones) and the UCB
    baselines' three (without faults, with loss alone, with any), so `mamab warmup`
    leaves none to compile. (The drivers are stopped at their first block: nothing compiles.)"""
    from mamab.algorithms.registry import builtin_names
    from mamab.engine import recording
    from mamab.engine.warmup import kernel_modules, warmup_configs
    from mamab.simulate import simulate

    class Fed(Exception):
        pass

    fed = set()

    def recorded(self, kernel, *args):
        fed.add((kernel.py_func.__module__, kernel.__name__))
        raise Fed

    monkeypatch.setattr(recording.FastRun, "feed", recorded)
    for config in warmup_configs():
        with pytest.raises(Fed):
            simulate(config, engine="fast", jobs=1)
    modules = {m.__name__ for m in kernel_modules(list(builtin_names()))}
    assert {module for module, _ in fed} == modules
    lcc, ucb = "mamab.algorithms.lcc.kernel", "mamab.algorithms.ucb.kernel"
    assert (lcc, "run_chunk") in fed
    assert {(ucb, "ucb_chunk"), (ucb, "ucb_chunk_faultless"), (ucb, "ucb_chunk_lossy")} <= fed
