"""Figures a paper can use (issue 22): drawn from small synthetic results, checked as a reader would.

Every legend entry has data inside the axes; no legend covers a line or a marker; no code key
(``name=value``, ``snake_case``, "default") in any text; the title says T; every text is at
least the tick labels' size; panels share the y axis; one far curve does not squeeze the others;
plots.py names no algorithm (labels, colours and bounds come from the specs).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer

import mamab
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.registry import builtin_names
from mamab.config import Config
from mamab.experiments.aggregate import ConfigResult
from mamab.experiments.report import render
from mamab.experiments.tasks import config_id
from mamab.plots import (
    Style,
    bits_figure,
    frontier_figure,
    labels,
    loss_figure,
    malicious_figure,
    panels,
    regret_figure,
    wrap,
)
from mamab.result import COUNTERS

RUNS, GRID = 6, 40
SRC = Path(mamab.__file__).parent


def fake(
    algorithm: str,
    agents: int = 10,
    arms: int = 100,
    final: float = 1000.0,
    bits: float = 500.0,
    silent_until_end: bool = False,
    **fields,
) -> ConfigResult:
    """A configuration whose regret grows like sqrt(t) to ``final`` and bits linearly to ``bits``."""
    params = {k: fields.pop(k) for k in list(fields) if k in AlgorithmParams.__dataclass_fields__}
    horizon = fields.pop("horizon", 20_000)
    config = Config(
        algorithm, agents, arms, horizon, runs=RUNS, params=AlgorithmParams(**params), **fields
    )
    grid = np.unique(np.geomspace(1, horizon, GRID).astype(np.int64))
    spread = np.linspace(0.95, 1.05, RUNS)[:, None]
    regret = final * np.sqrt(grid / horizon)[None, :] * spread
    sent = bits * (grid / horizon)[None, :] * spread
    if silent_until_end:
        sent[:, :-1] = 0.0
    counters = np.zeros((len(COUNTERS), RUNS, agents))
    counters[COUNTERS.index("bits_sent")] = sent[:, -1:]
    return ConfigResult(
        experiment="e",
        figure="f",
        config_id=config_id(config),
        config=config.to_dict(),
        grid=grid,
        regret=regret,
        bits=sent,
        final_regret=np.repeat(regret[:, -1:], agents, axis=1),
        counters=counters,
        diameter=np.ones(RUNS, dtype=np.int64),
        max_degree=np.full(RUNS, agents - 1, dtype=np.int64),
        crash=np.full((RUNS, agents), horizon + 1),
        malicious=np.zeros((RUNS, agents), dtype=np.int8),
    )


def paper_like() -> list[ConfigResult]:
    """Three (N, K) panels as in the paper's complete-graph figure: LCC-UCB, full and no
    communication, DEMAB in two readings (c = 16 ten times higher); the third panel without
    full communication (so its entries differ from the others')."""
    out = []
    for n, k in ((10, 100), (20, 100), (10, 200)):
        out += [
            fake("lcc-ucb", n, k, 1200, 400),
            fake("no-communication", n, k, 3000, 0.0),
            fake("demab", n, k, 2900, 800),
            fake("demab", n, k, 30_000, 780, demab_radius=16.0, demab_best_arm="own"),
        ]
        if k == 100:
            out.append(fake("full-communication", n, k, 800, 7e6))
    return out


def sparse_like() -> list[ConfigResult]:
    """Relay in two readings, one of which sends nothing before T, on G(N, 10/N)."""
    er = dict(graph="erdos-renyi", horizon=10_000)
    return [
        fake("lcc-ucb-graph", 100, 250, 600, 900, **er),
        fake("lcc-ucb-relay", 100, 250, 2500, 15_000, silent_until_end=True, **er),
        fake("lcc-ucb-relay", 100, 250, 700, 70_000, relay_k_prime="degree", **er),
        fake("no-communication", 100, 250, 2800, 0.0, **er),
        fake("full-communication", 100, 250, 1700, 7e6, **er),
    ]


def swept(field: str, values, outlier: str) -> list[ConfigResult]:
    out = []
    for v in values:
        for algorithm in ("lcc-ucb", "gosine", "lcc-ucb-robust", "no-communication"):
            final = 3000.0 if algorithm == outlier else 300.0 + 50 * v
            extra = {"loss": v} if field == "loss" else {"malicious": v}
            if field == "loss" and algorithm in ("lcc-ucb-robust", "no-communication"):
                continue
            out.append(fake(algorithm, 10, 100, final, 100.0, **extra))
    return out


FIGURES = {  # titles given: the same calls draw main's figures (each test failed there)
    "regret": lambda: regret_figure(paper_like(), "Cumulative regret per agent"),
    "regret-alpha1": lambda: regret_figure(
        [fake("lcc-ucb", final=900, alpha=1.0), fake("demab", final=2900)],
        "Cumulative regret per agent",
    ),
    "bits": lambda: bits_figure(paper_like(), "Bits sent per agent"),
    "sparse-bits": lambda: bits_figure(sparse_like(), "Bits sent per agent"),
    "frontier": lambda: frontier_figure(paper_like(), "Final regret against bits sent"),
    "sparse-frontier": lambda: frontier_figure(sparse_like(), "Final regret against bits sent"),
    "loss": lambda: loss_figure(
        swept("loss", (0.0, 0.3, 0.6, 0.9), outlier=""), "Final regret under message loss"
    ),
    "malicious": lambda: malicious_figure(
        swept("malicious", (0, 1, 2, 3), "no-communication"), "Final regret among liars"
    ),
}


@pytest.fixture(scope="module", params=sorted(FIGURES))
def drawn(request):
    fig = FIGURES[request.param]()
    fig.canvas.draw()
    yield request.param, fig
    import matplotlib.pyplot as plt

    plt.close(fig)


def panels_of(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.has_data()]


def legends(fig):
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def data_of(ax):
    """(label, x, y, marked) of every drawn line and error-bar series of a panel; ``marked``:
    its points carry markers (else only its segments show)."""
    out = []
    for line in ax.get_lines():
        marked = line.get_marker() not in ("None", "none", "", None)
        if line.get_linestyle() in ("None", "none", "") and not marked:
            continue
        x, y = (np.asarray(v, dtype=float) for v in line.get_data())
        out.append((line.get_label(), x, y, marked))
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer) and container.lines[0] is not None:
            x, y = container.lines[0].get_data()
            marked = container.lines[0].get_marker() not in ("None", "none", "", None)
            out.append((container.get_label(), np.asarray(x, float), np.asarray(y, float), marked))
    return out


def inside(ax, x, y, marked: bool = True) -> bool:
    """Whether a series shows inside the panel: a marker there, or a segment (two consecutive
    points: a line of one finite point draws nothing)."""
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    ok = np.isfinite(x) & np.isfinite(y) & (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    return bool(np.any(ok) if marked else np.any(ok[:-1] & ok[1:]))


def test_every_legend_entry_has_visible_data_inside_the_axes(drawn):
    name, fig = drawn
    entries = [t.get_text() for legend in legends(fig) for t in legend.get_texts()]
    assert entries, name
    for entry in entries:
        found = [
            (ax, x, y, marked)
            for ax in panels_of(fig)
            for label, x, y, marked in data_of(ax)
            if label == entry
        ]
        assert any(inside(*f) for f in found), f"{name}: {entry!r} shows nothing"


SOURCES = {"bits": paper_like, "sparse-bits": sparse_like, "frontier": paper_like}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_configuration_has_a_legend_entry(name):
    """No configuration silently missing (0 bits on a log axis was dropped before)."""
    fig = FIGURES[name]()
    try:
        entries = [t.get_text() for legend in legends(fig) for t in legend.get_texts()]
        results = SOURCES[name]()
        for members in panels(results).values():
            for label in labels(members):
                assert any(label in entry for entry in entries), (name, label, entries)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_no_legend_covers_a_line_or_a_marker(drawn):
    name, fig = drawn
    renderer = fig.canvas.get_renderer()
    for legend in legends(fig):
        box = legend.get_window_extent(renderer)
        for ax in panels_of(fig):
            for _, x, y, _ in data_of(ax):
                # the drawn path, densely: segments between points count, not just the points
                xs = np.interp(np.linspace(0, len(x) - 1, 20 * len(x)), np.arange(len(x)), x)
                ys = np.interp(np.linspace(0, len(y) - 1, 20 * len(y)), np.arange(len(y)), y)
                keep = np.isfinite(xs) & np.isfinite(ys)
                if ax.get_xscale() == "log":
                    keep &= xs > 0
                points = ax.transData.transform(np.column_stack([xs[keep], ys[keep]]))
                clip = ax.get_window_extent(renderer)
                visible = [p for p in points if clip.contains(*p)]
                covered = [p for p in visible if box.contains(*p)]
                assert not covered, f"{name}: the legend covers data at {covered[0]}"


CODE_KEY = re.compile(r"\w=\w|[a-z]_[a-z]|\bdefault\b|\balpha\b")


def texts_of(fig):
    out = [fig._suptitle] if fig._suptitle else []
    for ax in panels_of(fig):
        out += [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
    for legend in legends(fig):
        out += [*legend.get_texts(), legend.get_title()]
    return [t for t in out if t.get_text()]


def test_no_code_key_in_any_text(drawn):
    name, fig = drawn
    for text in texts_of(fig):
        assert not CODE_KEY.search(text.get_text()), f"{name}: {text.get_text()!r}"


def test_the_title_says_the_horizon(drawn):
    name, fig = drawn
    assert fig._suptitle is not None and re.search(r"T = [\d,]+", fig._suptitle.get_text()), name


def test_every_text_is_at_least_the_tick_labels_size(drawn):
    name, fig = drawn
    ticks = max(
        label.get_fontsize()
        for ax in panels_of(fig)
        for label in [*ax.get_xticklabels(), *ax.get_yticklabels()]
    )
    for text in texts_of(fig):
        assert text.get_fontsize() >= ticks, (name, text.get_text(), text.get_fontsize(), ticks)


def test_panels_share_their_y_range_or_say_so(drawn):
    name, fig = drawn
    ranges = {tuple(np.round(ax.get_ylim(), 6)) for ax in panels_of(fig)}
    said = fig._suptitle is not None and "own y" in fig._suptitle.get_text()
    assert len(ranges) == 1 or said, (name, ranges)


def test_a_far_curve_does_not_squeeze_the_others():
    """DEMAB (c = 16) ten times higher: the others keep most of the axis, and the far curve's
    leaving it is said, with its final value."""
    fig = FIGURES["regret"]()
    try:
        top = fig.axes[0].get_ylim()[1]
        assert top < 2 * 3000 * 1.05  # no communication (3000) is the highest of the others
        title = " ".join(fig._suptitle.get_text().split())
        assert "DEMAB (c = 16, own best arm)" in title and "above the axis" in title
        assert any("30,000" in t.get_text() for ax in fig.axes for t in ax.texts)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_the_alpha_figure_says_demab_takes_no_alpha():
    fig = FIGURES["regret-alpha1"]()
    try:
        title = " ".join(fig._suptitle.get_text().split())
        assert "α = 1" in title and "DEMAB takes no α" in title
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_silent_configurations_are_drawn_and_said():
    fig = FIGURES["sparse-bits"]()
    try:
        entries = [t.get_text() for legend in legends(fig) for t in legend.get_texts()]
        assert "no communication (0 bits)" in entries
        assert "relay (K' = ⌈K/N⌉ + N − 1) (nothing before T)" in entries
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


QUOTED = "\"{0}\"|'{0}'"


@pytest.mark.parametrize("module", ["plots.py", "figure_text.py"])
def test_figure_modules_name_no_algorithm(module):
    text = (SRC / module).read_text(encoding="utf-8")
    named = [n for n in builtin_names() if re.search(QUOTED.format(re.escape(n)), text)]
    assert not named, named


def test_report_embeds_png_and_links_a_pdf_only_figure(tmp_path):
    results = [fake("lcc-ucb"), fake("no-communication", final=3000, bits=0.0)]
    figures = tmp_path / "figures"
    text = render(results, {"f-regret": [figures / "f-regret.pdf"]}, tmp_path, "t", "n")
    assert "![f-regret]" not in text and "- [f-regret (PDF)](figures/f-regret.pdf)" in text
    both = {"f-regret": [figures / "f-regret.pdf", figures / "f-regret.png"]}
    assert "![f-regret](figures/f-regret.png)" in render(results, both, tmp_path, "t", "n")


@pytest.mark.slow  # about 5 s of simulation under load; the README's example runs by default
def test_plot_from_python_without_the_cli(tmp_path):
    """mamab.plot and Result.plot give the CLI's figures: returned, or written into out/figures."""
    results = [
        mamab.simulate(Config(a, 3, 6, 200, runs=2, grid_points=10), engine="reference")
        for a in ("lcc-ucb", "no-communication")
    ]
    figures = mamab.plot(results)
    assert set(figures) == {"results-regret", "results-bits", "results-frontier"}
    assert "T = 200" in figures["results-regret"]._suptitle.get_text()
    written = results[0].plot(tmp_path, style=Style(formats=("png",)))
    assert all(p.is_file() for paths in written.values() for p in paths)
    assert (tmp_path / "figures" / "results-regret.png").is_file()
    with pytest.raises(mamab.ConfigError):
        mamab.plot([])


def test_plot_from_python_keeps_no_figure_open_in_pyplot_nor_sets_the_backend():
    """mamab.plot without `out` hands its figures to the caller: none stays registered in pyplot
    (eight calls would warn of more than 20 open figures), and the user's backend is kept."""
    import matplotlib
    import matplotlib.pyplot as plt

    import mamab

    backend = matplotlib.get_backend()
    before = set(plt.get_fignums())
    figures = mamab.plot(paper_like(), figure="complete")
    assert figures and all(hasattr(f, "savefig") for f in figures.values())
    assert set(plt.get_fignums()) == before
    assert matplotlib.get_backend() == backend


def test_no_zoom_figure_beside_a_log_regret_axis():
    """With bounds (drawn on a log axis) or log_y there is no linear zoom figure."""
    from mamab.plots import Style, figure_plan

    results = paper_like()
    assert any(k.endswith("-regret-zoom") for k in figure_plan(results, False, Style()))
    for bounds, style in ((True, Style()), (False, Style(log_y=True))):
        assert not any(k.endswith("-regret-zoom") for k in figure_plan(results, bounds, style))


def test_report_tables_speak_the_legends_words():
    """report.md's table per figure names configurations as the legends do, no code keys."""
    from mamab.experiments.report import figure_table

    table = figure_table(paper_like())
    assert "DEMAB (c = 16, own best arm)" in table and "| LCC-UCB |" in table
    assert "complete graph" in table
    for key in ("demab_radius", "demab_best_arm", "default", "lcc-ucb", "no-communication"):
        assert key not in table, key


# -- issue 23: --quick's figures cost less, the same figures --------------------------------------


def test_a_figure_is_laid_out_once_whatever_its_formats(tmp_path, monkeypatch):
    """The second and third formats keep the first's layout (each used to lay it out anew)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from mamab.plots import save

    calls = []
    execute = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(
        ConstrainedLayoutEngine, "execute", lambda self, fig: calls.append(1) or execute(self, fig)
    )
    paths = save(regret_figure(paper_like()), tmp_path / "r", Style(formats=("png", "svg", "pdf")))
    assert [p.suffix for p in paths] == [".png", ".svg", ".pdf"] and all(
        p.stat().st_size for p in paths
    )
    assert len(calls) == 1


def test_a_figure_is_drawn_once_per_format(tmp_path, monkeypatch):
    """Three formats, three draws, one per file: the PNG's layout is computed without drawing
    (savefig drew the figure once more, unseen, for it; a figure keeping a placeholder layout
    engine was drawn twice per file)."""
    from matplotlib.figure import Figure

    from mamab.plots import save

    draws = []
    draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: draws.append(1) or draw(self, r))
    save(regret_figure(paper_like()), tmp_path / "r", Style(formats=("png", "svg", "pdf")))
    assert len(draws) == 3


@pytest.mark.parametrize("figure", [regret_figure, frontier_figure])
def test_the_layout_without_a_draw_gives_savefigs_bytes(figure, tmp_path, monkeypatch):
    """The PNG's layout computed without drawing places every panel as savefig's own unseen
    draw does: the same bytes in every format."""
    import mamab.plots
    from mamab.plots import save

    style = Style(formats=("png", "svg", "pdf"))
    fast = save(figure(paper_like()), tmp_path / "fast", style)
    monkeypatch.setattr(mamab.plots, "place_for_png", lambda fig, style: False)
    slow = save(figure(paper_like()), tmp_path / "slow", style)
    for a, b in zip(fast, slow, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_the_same_figure_gives_the_same_bytes(tmp_path):
    """No date, no random ids: drawing a figure twice writes identical files in every format."""
    from mamab.plots import save

    style = Style(formats=("png", "svg", "pdf"))
    first = save(regret_figure(paper_like()), tmp_path / "a", style)
    again = save(regret_figure(paper_like()), tmp_path / "b", style)
    for a, b in zip(first, again, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def _png_pixels(path: Path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path), dtype=int)


@pytest.mark.parametrize("name", ["regret", "bits", "frontier", "loss"])
def test_a_title_on_the_top_edge_is_where_matplotlib_would_put_it(name, tmp_path, monkeypatch):
    """Panel titles placed on the top edge draw the same bytes as matplotlib's own search for
    decorations above the panel (which found none to avoid)."""
    import mamab.plots
    from mamab.plots import save

    style = Style(formats=("png",))
    (given,) = save(FIGURES[name](), tmp_path / "given", style)
    monkeypatch.setattr(mamab.plots, "TITLE_Y", None)  # matplotlib's own search
    (searched,) = save(FIGURES[name](), tmp_path / "searched", style)
    assert given.read_bytes() == searched.read_bytes()


@pytest.mark.parametrize("name", ["regret", "bits", "frontier", "loss"])
def test_a_frame_left_out_of_the_layout_leaves_the_pixels(name, tmp_path, monkeypatch):
    """Frames left out of the layout draw what frames measured by it draw: the panels' places
    agree to rounding (1e-16 of the figure), which may turn a pixel by one level of 255."""
    import mamab.plots
    from mamab.plots import save

    style = Style(formats=("png",))
    (out,) = save(FIGURES[name](), tmp_path / "out", style)
    monkeypatch.setattr(mamab.plots, "frame_out_of_layout", lambda ax: None)
    (measured,) = save(FIGURES[name](), tmp_path / "measured", style)
    a, b = _png_pixels(out), _png_pixels(measured)
    assert a.shape == b.shape
    assert np.abs(a - b).max() <= 1
    assert np.count_nonzero(a != b) <= 100


def _numbers(fig) -> list[tuple]:
    return [(t.get_text(), t.xyann) for ax in panels_of(fig) for t in ax.texts]


@pytest.mark.parametrize("results", [paper_like, sparse_like])
def test_frontier_numbers_are_placed_without_rendering_as_after_a_draw(results, monkeypatch):
    """The frontier settles its layout and limits without drawing a pixel, and places its point
    numbers exactly where a full draw's limits put them."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    import mamab.plots

    draws = []
    draw = FigureCanvasAgg.draw
    monkeypatch.setattr(FigureCanvasAgg, "draw", lambda self: draws.append(1) or draw(self))
    settled = frontier_figure(results())
    assert draws == []
    monkeypatch.setattr(mamab.plots, "settle", lambda fig: fig.canvas.draw())
    drawn = frontier_figure(results())
    assert _numbers(settled) == _numbers(drawn) and _numbers(settled)
    plt.close(settled)
    plt.close(drawn)


SPARSE_CAPTION = (
    "bands: order-statistic interval of the median, coverage 97.9% with 10 runs; DEMAB takes no "
    "α: the same at every α; panels share the y axis; T = 20,000"
)


@pytest.mark.parametrize("width", [30, 60, 90, 130, 200])
def test_titles_wrap_into_as_few_lines_of_even_lengths(width):
    lines = wrap(SPARSE_CAPTION, width)
    assert " ".join(lines) == SPARSE_CAPTION
    assert len(lines) == len(textwrap.wrap(SPARSE_CAPTION, width))
    assert all(len(line) <= width for line in lines)
    assert not any(line.endswith(" =") or line.startswith("= ") for line in lines), lines
    if len(lines) > 1:  # the shortest line is not a word left alone
        assert min(map(len, lines)) >= 0.5 * max(map(len, lines)), lines


@pytest.mark.parametrize("figure", [bits_figure, frontier_figure])
def test_files_draw_minor_marks_as_one_artist_with_the_same_pixels(figure, tmp_path, monkeypatch):
    """A figure returned to the caller keeps matplotlib's minor ticks (a minor grid, tick_params
    still work); a file mamab saves draws them as one artist per axis, pixel for pixel."""
    from matplotlib.ticker import NullLocator

    from mamab import plots

    fig = figure(paper_like())
    assert not any(isinstance(ax.xaxis.get_minor_locator(), NullLocator) for ax in fig.axes)
    [light] = plots.save(fig, tmp_path / "light", Style(formats=("png",)))
    assert all(isinstance(ax.xaxis.get_minor_locator(), NullLocator) for ax in fig.axes)
    monkeypatch.setattr(plots, "minor_marks_as_one", lambda axes: None)
    [plain] = plots.save(figure(paper_like()), tmp_path / "plain", Style(formats=("png",)))
    assert light.read_bytes() == plain.read_bytes()
