"""The main job: run a paper preset, draw its figures, write report.md."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.registry import builtin_names, lookup
from mamab.experiments.executors import Executor, LocalExecutor
from mamab.experiments.report import (
    FAMILY_TITLES,
    PAPER_CITATION,
    PAPER_UCB,
    alpha_text,
    alphas_by_family,
    render,
)
from mamab.experiments.runner import SweepOutcome, run_sweep
from mamab.experiments.spec import SweepSpec
from mamab.outdir import claimed
from mamab.plots import Style, draw_all
from mamab.resources import cores
from mamab.storage import atomic_write


def _alpha_follows() -> frozenset[str]:
    """Algorithms whose alpha ``--alpha`` sets: the paper's UCB algorithms, and the other
    built-ins on their kernel (LCC-UCB's robust variant: compared with LCC-UCB, it must explore
    alike)."""
    kernels = {lookup(name).fast.kernels for name in PAPER_UCB}  # type: ignore[union-attr]
    same = {n for n in builtin_names() if lookup(n).fast and lookup(n).fast.kernels in kernels}  # type: ignore[union-attr]
    return PAPER_UCB | same


ALPHA_FOLLOWS = _alpha_follows()


def with_alpha(spec: SweepSpec, alpha: float) -> SweepSpec:
    """``spec`` with the paper's UCB algorithms at ``alpha`` wherever it leaves alpha to the default.

    Configurations that set alpha (the presets' 'alpha1' figures), DEMAB (its own radius), GosInE
    and coop-UCB2 (their own constants) are left as they are.
    """
    AlgorithmParams(alpha=alpha)  # one-line error for a bad value

    def fix(config):
        if config.algorithm not in ALPHA_FOLLOWS or config.params.alpha is not None:
            return config
        return dataclasses.replace(config, params=dataclasses.replace(config.params, alpha=alpha))

    experiments = tuple(
        dataclasses.replace(e, configs=tuple(fix(c) for c in e.configs)) for e in spec.experiments
    )
    return dataclasses.replace(spec, experiments=experiments)


def reproduce(
    spec: SweepSpec,
    out: Path,
    jobs: int | None = None,
    bounds: bool = False,
    executor: Executor | None = None,
    alpha: float | None = None,
    style: Style | None = None,
    allow_long: bool = False,
    confirm: str = "pass allow_long=True to run it anyway",
) -> SweepOutcome:
    """Run ``spec`` (locally on ``jobs`` processes, or on ``executor``), draw, write report.md.

    ``alpha``: the exploration constant of the paper's UCB algorithms where the preset leaves it
    to the default (the paper states 2; its figures fit 1). ``allow_long``: run a preset
    estimated at more than 24 hours (:func:`~mamab.experiments.runner.run_sweep`). ``out`` is
    locked throughout
    (:mod:`mamab.outdir`); ``out/figures`` ends holding exactly this run's figures.
    """
    if alpha is not None:
        spec = with_alpha(spec, alpha)
    with claimed(out, "sweep"):  # tables, figures and report.md of one run, never mixed
        outcome = run_sweep(
            spec, out, executor=executor, jobs=jobs, allow_long=allow_long, confirm=confirm
        )
        figures = draw_all(
            outcome.results,
            out,
            bounds=bounds,
            style=style or Style(),
            jobs=drawing_jobs(jobs, executor),
        )
        if spec.name.startswith("malicious"):
            title, notes = (
                "mamab: honest regret among malicious agents",
                _malicious_notes(spec, outcome, alpha),
            )
        else:
            title, notes = (
                "mamab: reproduction of the paper's evaluation",
                _paper_notes(spec, outcome, alpha),
            )
        text = render(outcome.results, figures, out, title, notes)
        atomic_write(out / "report.md", lambda tmp: tmp.write_text(text))
    return outcome


def drawing_jobs(jobs: int | None = None, executor: Executor | None = None) -> int:
    """Figures drawn at once: one per core here, at most the jobs the user allowed the tasks
    (``jobs``, or a local executor's); figures are drawn on this machine whatever ran the tasks."""
    if jobs is None and isinstance(executor, LocalExecutor):
        jobs = executor.jobs
    return max(1, min(jobs or cores(), cores()))


def _run_line(spec: SweepSpec, outcome: SweepOutcome) -> str:
    return (
        f"Preset `{spec.name}`: seed {spec.seed}, {spec.runs} runs per configuration, new arm "
        f"means (U(0,1)) and a new graph every run. {outcome.tasks_run} tasks computed in "
        f"{outcome.seconds:.0f} s, {outcome.tasks_skipped} reused."
    )


def _paper_notes(spec: SweepSpec, outcome: SweepOutcome, alpha: float | None) -> str:
    given = "" if alpha is None else f", set by --alpha = {alpha:g} where the preset leaves it"
    alphas = alphas_by_family(outcome.results)
    ran = "; ".join(
        f"{FAMILY_TITLES[f].split(' (')[0]}: {alpha_text(a)}" for f, a in alphas.items()
    )
    return (
        f"{_run_line(spec, outcome)} Paper: {PAPER_CITATION}.\n\n"
        f"Three choices the paper leaves open are shown in each reading: the exploration constant "
        f"of the paper's UCB algorithms (2 as the paper states, 1 as its figures' axes fit{given}; "
        f"this run: {ran or 'none'}), DEMAB's radius constant and best-arm rule, and relay's K'. "
        f"The 'Fidelity' sections compare each reading with the paper's figure axes and check the "
        f"paper's claims under each."
    )


def _malicious_notes(spec: SweepSpec, outcome: SweepOutcome, alpha: float | None) -> str:
    stated = (
        ""
        if alpha is None
        else (
            f" alpha = {alpha:g} (--alpha) for LCC-UCB, its robust variant and no communication;"
            " GosInE keeps its own."
        )
    )
    return (
        f"{_run_line(spec, outcome)} Liars are drawn anew every run among the N agents; they play "
        f"and talk like peers but forge every recommendation they send (docs/faults.md). Regret is "
        f"the mean over the honest agents. The robust variants block peers whose recommendations "
        f"do not prove out (docs/algorithms/lcc-ucb-robust.md, docs/algorithms/gosine-robust.md)."
        f"{stated}"
    )
