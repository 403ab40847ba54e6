"""What a figure says in words: algorithms by their specs' labels, settings as a paper writes them.

Legends read "DEMAB (c = 16, own best arm)", titles "complete graph, T = 20,000, α = 1": the
algorithm's name and its parameters' words come from its spec (:class:`AlgorithmSpec` ``label``,
``words``, ``describe``), the setting's from :data:`SETTING_WORDS`. Nothing here names an
algorithm. Light: no matplotlib.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from mamab.algorithms.spec import AlgorithmSpec
from mamab.columns import STRATEGY_FIELDS, field_text
from mamab.errors import ConfigError
from mamab.experiments.aggregate import ConfigResult, plugin_parameters, varying

#: Setting fields a figure's title never names (how the curves are recorded; the arm means,
#: drawn anew every run unless given); a panel's title names them when they differ.
UNSAID = frozenset({"seed", "grid_points", "grid_style", "graph_sha256", "runs", "means"})
#: Fields a title names only when they differ from Config's default (no loss, no crashes, ...).
QUIET = frozenset(
    {"loss", "delay", "crash_rate", "crash_at", "recover_after", "malicious", "sigma"}
)

ATTACK_WORDS = {
    "worst": "liars name the worst arm",
    "best-second": "liars name the second-best arm",
    "random": "liars name random arms",
    "truthful": "liars tell the truth",
}


def spec_of(algorithm: str) -> AlgorithmSpec | None:
    """The registered spec of ``algorithm`` (None: a plugin not installed here)."""
    from mamab.algorithms.registry import lookup

    try:
        return lookup(algorithm)
    except ConfigError:
        return None


def algorithm_title(algorithm: str) -> str:
    """The algorithm's name in figures: its spec's label, else its registered name."""
    spec = spec_of(algorithm)
    return spec.title if spec else algorithm


def reads(r: ConfigResult, name: str) -> bool:
    """Whether the configuration's algorithm uses parameter ``name`` (unknown plugin: yes)."""
    spec = spec_of(r.config["algorithm"])
    if spec is None or name == "extra" or name not in STRATEGY_FIELDS:
        return True
    return name in spec.reads


def parameter_words(r: ConfigResult, name: str) -> str:
    """One strategy parameter of a configuration in words ("c = 16"), from its spec."""
    spec = spec_of(r.config["algorithm"])
    if name == "extra":
        pairs = plugin_parameters(r).items()
        return ", ".join(
            spec.describe(k, v) if spec else f"{k.replace('_', ' ')} = {field_text(v)}"
            for k, v in pairs
        )
    value = r.flat[name]
    if spec is None:
        return f"{name.replace('_', ' ')} = {field_text(value)}"
    return spec.describe(name, value)


def strategy_label(r: ConfigResult, members: list[ConfigResult]) -> str:
    """A configuration's algorithm in words, with the parameters it reads that vary between the
    ``members`` of the same algorithm ("DEMAB (c = 16, own best arm)"): legends and tables."""
    name = r.config["algorithm"]
    same = [m for m in members if m.config["algorithm"] == name]
    fields = [k for k in varying(same, STRATEGY_FIELDS) if k != "algorithm" and reads(r, k)]
    words = ", ".join(parameter_words(r, k) for k in fields)
    title = algorithm_title(name)
    return f"{title} ({words})" if len(same) > 1 and words else title


def graph_words(value: str, r: ConfigResult) -> str:
    """A configuration's graph in words ("Erdős–Rényi G(N, 10/N)")."""
    if value == "complete":
        return "complete graph"
    if value == "erdos-renyi":
        p = r.config.get("edge_prob")
        return "Erdős–Rényi G(N, 10/N)" if p is None else f"Erdős–Rényi G(N, p = {p:g})"
    if value == "networkx":
        return "a given graph"
    return f"{value} graph" if "/" not in value and "." not in value else f"graph {value}"


#: A setting field's value in words, for a title: (value, configuration) -> text ("" to omit).
SETTING_WORDS: dict[str, Callable[[object, ConfigResult], str]] = {
    "agents": lambda v, r: f"N = {v}",
    "arms": lambda v, r: f"K = {v}",
    "horizon": lambda v, r: f"T = {v:,}",
    "reward": lambda v, r: f"{v} rewards".capitalize(),
    "sigma": lambda v, r: f"σ = {v:g}" if r.config.get("reward") == "gaussian" else "",
    "graph": graph_words,
    "edge_prob": lambda v, r: "p = 10/N" if v is None else f"p = {v:g}",
    "means": lambda v, r: f"arm means {field_text(r.flat['means'])}",  # long: shortened
    "loss": lambda v, r: f"loss q = {v:g}",
    "delay": lambda v, r: f"delay probability {v:g}",
    "crash_rate": lambda v, r: f"crash rate {v:g}",
    "crash_at": lambda v, r: "crashes at given steps" if v else "no crashes",
    "recover_after": lambda v, r: f"recovery after {v} steps" if v else "no recovery",
    "malicious": lambda v, r: f"{v} liars" if isinstance(v, int) else "given liars",
    "attack": lambda v, r: ATTACK_WORDS.get(str(v), f"attack {v}"),
}


def setting_words(r: ConfigResult, fields: list[str]) -> list[str]:
    """The given setting fields of a configuration in words."""
    out = []
    for name in fields:
        value = r.config.get(name, r.flat.get(name))
        words = SETTING_WORDS.get(name)
        text = words(value, r) if words else f"{name.replace('_', ' ')} = {field_text(value)}"
        if text:
            out.append(text)
    return out


def _defaults() -> dict[str, object]:
    from dataclasses import MISSING, fields

    from mamab.config import Config

    return {f.name: f.default for f in fields(Config) if f.default is not MISSING}


def alpha_words(results: list[ConfigResult]) -> str:
    """The exploration constant in force, as the title says it: "α = 2", or "α = 2 (GosInE: 4)"
    when algorithms differ; "" when no configuration uses one."""
    in_force: dict[str, set[float]] = {}
    for r in results:
        spec = spec_of(r.config["algorithm"])
        if spec is None or spec.alpha_from != "alpha" or "alpha" not in spec.reads:
            continue
        value = r.config["params"].get("alpha") if r.config.get("params") else None
        alpha = spec.default_alpha if value is None else float(value)
        if alpha is not None:
            in_force.setdefault(spec.title, set()).add(alpha)
    if not in_force or any(len(v) > 1 for v in in_force.values()):
        return ""  # none, or varying within an algorithm: the legend says it
    common = Counter(next(iter(v)) for v in in_force.values()).most_common(1)[0][0]
    others = [f"{name}: {next(iter(v)):g}" for name, v in in_force.items() if common not in v]
    return f"α = {common:g}" + (f" ({', '.join(others)})" if others else "")


def ignores_alpha(results: list[ConfigResult]) -> list[str]:
    """Titles of the algorithms in ``results`` that take no α (DEMAB: its radius constant)."""
    names = []
    for r in results:
        spec = spec_of(r.config["algorithm"])
        if spec is not None and "alpha" not in spec.reads and spec.title not in names:
            names.append(spec.title)
    return names


def figure_setting(results: list[ConfigResult], across: list[str]) -> str:
    """The setting shared by every panel of a figure in words, with α where it is one value.

    Fields at Config's default that change nothing to say (no loss, no liars, no crashes) and
    how curves are recorded (seed, grid) are left out."""
    first = results[0]
    defaults = _defaults()
    fixed = [
        k
        for k in first.flat
        if k not in STRATEGY_FIELDS
        and k not in across
        and k not in UNSAID
        and k != "edge_prob"  # said with the graph
        and not (k in QUIET and first.config.get(k) == defaults.get(k))
    ]
    fixed = [k for k in fixed if k not in varying(results, (k,))]
    if not any(r.config.get("malicious") for r in results):
        fixed = [k for k in fixed if k != "attack"]  # no liars: no attack to name
    parts = setting_words(first, fixed)
    alpha = alpha_words(results)
    if alpha:
        parts.append(alpha)
    return ", ".join(parts)


def alpha_note(results: list[ConfigResult]) -> str:
    """'DEMAB takes no α: ...' when the title states an α that some algorithm does not use."""
    if not alpha_words(results):
        return ""
    names = ignores_alpha(results)
    if not names:
        return ""
    verb = "takes" if len(names) == 1 else "take"
    return f"{' and '.join(names)} {verb} no α: the same at every α"
