"""The main job: run a paper preset, draw its figures, write report.md."""

from __future__ import annotations

from pathlib import Path

from mamab.experiments.executors import Executor
from mamab.experiments.report import render
from mamab.experiments.runner import SweepOutcome, run_sweep
from mamab.experiments.spec import SweepSpec
from mamab.plots import draw_all
from mamab.storage import atomic_write


def reproduce(
    spec: SweepSpec,
    out: Path,
    jobs: int | None = None,
    bounds: bool = False,
    executor: Executor | None = None,
) -> SweepOutcome:
    """Run ``spec`` (locally on ``jobs`` processes, or on ``executor``), draw, write report.md."""
    outcome = run_sweep(spec, out, executor=executor, jobs=jobs)
    figures = draw_all(outcome.results, out, bounds=bounds)
    notes = (
        f"Preset `{spec.name}`: seed {spec.seed}, {spec.runs} runs per configuration, new arm means "
        f"(U(0,1)) and a new graph every run. Paper: Agarwal, Aggarwal and Azizzadenesheli, Multi-Agent Multi-Armed Bandits with Limited Communication (JMLR 2022) "
        f"(`shared/paper/`). {outcome.tasks_run} tasks computed in {outcome.seconds:.0f} s, "
        f"{outcome.tasks_skipped} reused."
    )
    text = render(
        outcome.results, figures, out, "mamab: reproduction of the paper's evaluation", notes
    )
    atomic_write(out / "report.md", lambda tmp: tmp.write_text(text))
    return outcome
