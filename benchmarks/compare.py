"""Time two revisions of mamab against each other, in alternating rounds, on one machine.

    python benchmarks/compare.py REV_A REV_B [--rounds 3] [--filter REGEX] [--repeat 3] [--quick]

REV_A and REV_B are git revisions of this repository (each checked out into a temporary
worktree, removed at the end even on failure or Ctrl-C) or paths of existing checkouts (used as
they are). Both revisions are timed by the same harness, this directory's ``run.py --rows``
(``--harness each``: each revision's own ``benchmarks/run.py``, which must know ``--rows``), in
a fresh subprocess whose ``PYTHONPATH`` is that checkout's ``src``. First each checkout's numba
cache is warmed (numba caches beside the sources, so a new worktree compiles once, untimed);
then rounds run A, B, A, B, ...; each takes the best of ``--repeat`` runs per row on one thread.
Prints a Markdown table of seconds and of the ratio B/A per round and its median (below 1: B is
faster). The "rng floor" row times numpy alone: its ratio shows the machine's noise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from refusal import refuse

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


class Checkouts:
    """The two code trees to time: existing paths, or temporary worktrees of revisions."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="mamab-compare-"))
        self.made: list[Path] = []
        self.labels: list[str] = []
        self.paths: list[Path] = []

    def add(self, side: str, rev: str) -> None:
        self.paths.append(self._checkout(side, rev))

    def _checkout(self, side: str, rev: str) -> Path:
        path = Path(rev)
        if path.is_dir():
            if not (path / "src" / "mamab").is_dir():
                raise refuse(f"{rev} is a directory without src/mamab: not a mamab checkout")
            self.labels.append(f"{rev} (path)")
            return path.resolve()
        try:
            commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
        except subprocess.CalledProcessError:
            raise refuse(f"{rev!r} is neither a directory nor a git revision of {REPO}") from None
        where = self.tmp / side
        git("worktree", "add", "--detach", str(where), commit)
        self.made.append(where)
        self.labels.append(f"{rev} ({commit[:10]})")
        return where

    def close(self) -> None:
        for where in self.made:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(where)],
                cwd=REPO,
                capture_output=True,
                check=False,
            )
        shutil.rmtree(self.tmp, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=REPO, capture_output=True, check=False)


def harness(args: argparse.Namespace, checkout: Path) -> Path:
    return HERE / "run.py" if args.harness == "self" else checkout / "benchmarks" / "run.py"


def run_rows(args: argparse.Namespace, checkout: Path, warm: bool = False) -> dict[str, float]:
    """One fresh process of the harness on ``checkout``'s sources: {row label: best seconds}."""
    command = [
        sys.executable,
        str(harness(args, checkout)),
        "--rows",
        "--repeat",
        str(args.repeat),
        "--min-time",
        str(args.min_time),
        "--clock",
        args.clock,
    ]
    if args.filter:
        command += ["--filter", args.filter]
    if args.quick:
        command.append("--quick")
    if warm:
        command.append("--warm")
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"benchmark on {checkout} failed:\n{done.stderr.strip()}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    imported = Path(lines[0]["mamab"]).resolve()
    if not imported.is_relative_to((checkout / "src").resolve()):
        raise SystemExit(f"the benchmark of {checkout} imported mamab from {imported}")
    return {line["row"]: line["seconds"] for line in lines[1:]}


def markdown(labels: list[str], rounds: list[tuple[dict, dict]], clock: str) -> str:
    rows = [row for row in rounds[0][0] if all(row in a and row in b for a, b in rounds)]
    head = ["row", "A best s", "B best s"] + [f"B/A r{i + 1}" for i in range(len(rounds))]
    head.append("median B/A")
    lines = [
        f"A = {labels[0]}, B = {labels[1]}; {len(rounds)} alternating rounds; "
        f"seconds of {clock} time per simulation, best of each round.",
        "",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    medians = []
    for row in rows:
        ratios = [b[row] / a[row] for a, b in rounds]
        medians.append(statistics.median(ratios))
        cells = [
            row,
            f"{min(a[row] for a, _ in rounds):.4f}",
            f"{min(b[row] for _, b in rounds):.4f}",
        ]
        cells += [f"{r:.3f}" for r in ratios] + [f"**{medians[-1]:.3f}**"]
        lines.append("| " + " | ".join(cells) + " |")
    if medians:
        geo = statistics.geometric_mean(medians)
        lines += ["", f"Geometric mean of the median ratios over {len(rows)} rows: {geo:.3f}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rev_a", help="git revision or checkout path (the baseline)")
    parser.add_argument("rev_b", help="git revision or checkout path (the candidate)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many per round")
    parser.add_argument(
        "--min-time",
        type=float,
        default=0.2,
        help="seconds a measurement lasts at least (a row is repeated within it)",
    )
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time the process's CPU (default: robust to other load) or wall time",
    )
    parser.add_argument("--filter", help="only rows whose label matches this regex (run.py --list)")
    parser.add_argument("--quick", action="store_true", help="horizons / 10")
    parser.add_argument(
        "--harness",
        choices=("self", "each"),
        default="self",
        help="time both with this run.py (default) or each with its own",
    )
    parser.add_argument("--json", type=Path, help="also write the raw timings here")
    args = parser.parse_args()
    if args.rounds < 1 or args.repeat < 1:
        parser.error("--rounds and --repeat must be at least 1")
    try:
        re.compile(args.filter or "")
    except re.error as err:
        parser.error(f"--filter is not a regular expression: {err}")
    # SIGTERM as an exception too, so the worktrees are removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("compare.py: terminated"))
    checkouts = Checkouts()
    try:
        checkouts.add("a", args.rev_a)
        checkouts.add("b", args.rev_b)
        start = time.perf_counter()
        for path in checkouts.paths:
            print(f"warming numba's cache in {path} ...", file=sys.stderr, flush=True)
            run_rows(args, path, warm=True)
        rounds = []
        for i in range(args.rounds):
            print(f"round {i + 1}/{args.rounds}: A, then B", file=sys.stderr, flush=True)
            a = run_rows(args, checkouts.paths[0])
            b = run_rows(args, checkouts.paths[1])
            rounds.append((a, b))
        print(markdown(checkouts.labels, rounds, args.clock))
        load = os.getloadavg()
        print(f"\n_({time.perf_counter() - start:.0f} s; load average at the end {load[0]:.1f})_")
        if args.json:
            args.json.write_text(
                json.dumps({"labels": checkouts.labels, "rounds": rounds}, indent=1)
            )
    finally:
        checkouts.close()


if __name__ == "__main__":
    main()
