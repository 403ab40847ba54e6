"""Where drawing a sweep's figures spends its time: each figure's stages, in CPU seconds.

    python benchmarks/figures.py RESULTS_DIR [--format png] [--format svg] [--dpi 200]

Reads the stored tables of a finished sweep or reproduction (as ``mamab plot`` does) and draws
every figure in this one process, in order, timing the stages of ``mamab.plots.save`` for
each: building it (panels, curves, captions; a frontier figure's first layout is part of it),
its minor tick marks and its layout as a PNG of that dpi would get it (when PNG comes first;
else the first format's file lays it out), then each format's file (written to memory, not to
disk). The first figure
also pays for loading the fonts. ``mamab reproduce`` draws the same figures on one process per
core (:func:`mamab.plots.draw_all`), so its wall time for them is about this total over the
cores.
"""

from __future__ import annotations

import argparse
import io
import os
import time
from pathlib import Path

from refusal import refuse

from mamab.errors import ConfigError

STAGES = ("build", "layout")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a finished sweep's or reproduction's --out")
    parser.add_argument("--format", dest="formats", action="append", choices=("png", "svg", "pdf"))
    parser.add_argument("--dpi", type=int, default=200)
    args = parser.parse_args()
    if args.dpi < 1:
        raise refuse(f"--dpi must be positive (got {args.dpi})")
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.pyplot as plt

    from mamab.experiments.aggregate import read_curves
    from mamab.minor_ticks import minor_marks_as_one
    from mamab.plots import Style, _savefig, figure_plan, keep_places, place_for_png

    try:
        results = read_curves(args.results)
    except ConfigError as err:
        raise refuse(str(err)) from None
    style = Style(formats=tuple(dict.fromkeys(args.formats or ("png", "svg"))), dpi=args.dpi)
    columns = [*STAGES, *style.formats]
    totals = dict.fromkeys(columns, 0.0)
    print(f"| figure | {' | '.join(columns)} | all |")
    print(f"|---|{'---|' * (len(columns) + 1)}")
    for key, draw in figure_plan(results, False, style).items():
        times = {}
        start = time.process_time()
        fig = draw()
        times["build"] = time.process_time() - start
        start = time.process_time()  # what mamab.plots.save does, step by step
        minor_marks_as_one(fig.axes)
        if place_for_png(fig, style):  # else the first format's savefig lays it out
            keep_places(fig)
        times["layout"] = time.process_time() - start
        for fmt in style.formats:
            start = time.process_time()
            _savefig(fig, io.BytesIO(), fmt, style)
            keep_places(fig)
            times[fmt] = time.process_time() - start
        plt.close(fig)
        for column in columns:
            totals[column] += times[column]
        cells = " | ".join(f"{times[c]:.2f}" for c in columns)
        print(f"| {key} | {cells} | {sum(times.values()):.2f} |")
    cells = " | ".join(f"**{totals[c]:.2f}**" for c in columns)
    print(f"| all | {cells} | **{sum(totals.values()):.2f}** |")


if __name__ == "__main__":
    main()
