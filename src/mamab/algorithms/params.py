"""An algorithm's tunable constants: the built-ins' named fields and a plugin's own parameters."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from mamab.errors import ConfigError

#: A plugin parameter's value: a finite number, a string or a flag (what TOML and the CLI hold).
ParamValue = bool | int | float | str
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_EXTRA = 64  # plugin parameters per configuration
MAX_TEXT = 200  # characters of a string-valued parameter
DDUCB_EPSILON = 1 / 22  # DDUCB's mixing accuracy in the authors' experiments
DDUCB_INDEX = ("every-step", "per-stage")  # the authors' code; Algorithm 1 as printed


#: DEMAB's rule for an agent with no arm left: play the server's announced best arm ("shared",
#: the reconstruction's reading) or the arm it last reported itself ("own": the LCC paper's
#: "the agents do not share the knowledge of the best arm").
DEMAB_BEST_ARM = ("shared", "own")
#: Relay's K' = ceil(K/N) + X: X = N - 1 ("agents": every agent hears all others, as on the
#: complete graph) or X = K_G ("degree": the graph's maximum degree, as LCC-UCB-GRAPH).
RELAY_K_PRIME = ("agents", "degree")


@dataclass(frozen=True)
class AlgorithmParams:
    """Tunable constants; ``None`` means the paper's value, derived from the graph.

    ``extra`` holds a plugin algorithm's own parameters (the built-ins take none): give a
    mapping, e.g. ``AlgorithmParams(extra={"epsilon": 0.05})``; it is stored as a tuple of
    ``(name, value)`` pairs sorted by name, so a configuration stays frozen and hashable, and is
    read with ``params.get("epsilon", 0.1)`` or the read-only mapping ``params.options``. Names
    are identifiers (not a field name above); values are finite numbers, strings or booleans.
    A plugin may declare the names it takes (``parameters=`` when registering); others are refused.
    """

    alpha: float | None = None  # UCB exploration constant; default per algorithm (not DEMAB's)
    k_prime: int | None = None
    sub_epochs: int | None = None
    gossip_exponent: float = 3.0  # gosine: phase j ends at t = ceil(j^exponent)
    consensus_kappa: float = 1.0  # coop-ucb2: P = I - (kappa / max degree) L
    demab_radius: float | None = None  # DEMAB: c in the radius sqrt(c·log T / n); default 2
    demab_best_arm: str = "shared"  # DEMAB: what an agent with no arm left plays (DEMAB_BEST_ARM)
    relay_k_prime: str = "agents"  # lcc-ucb-relay: K' = ceil(K/N) + N-1 or + K_G (RELAY_K_PRIME)
    dducb_epsilon: float = DDUCB_EPSILON  # dducb: mixing accuracy in C = ceil(ln(2N/eps)/...)
    dducb_index: str = "every-step"  # dducb: "every-step" (authors' code) or "per-stage" (Alg. 1)
    block_exponent: float = 2.0  # gosine-robust: a bad recommender of phase j blocked to j^this
    extra: tuple[tuple[str, ParamValue], ...] = ()  # a plugin's own parameters, sorted by name

    def __post_init__(self) -> None:
        for name in ("alpha", "demab_radius"):
            value = getattr(self, name)
            if value is not None and not (finite_number(value) and value > 0):
                raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
        if not self.gossip_exponent > 1:
            raise ConfigError(f"gossip exponent must exceed 1, got {self.gossip_exponent}")
        if not (finite_number(self.block_exponent) and self.block_exponent > 1):
            raise ConfigError(
                f"block exponent must be a finite number above 1, got {self.block_exponent!r}"
            )
        if not 0 < self.consensus_kappa <= 1:
            raise ConfigError(f"consensus kappa must lie in (0, 1], got {self.consensus_kappa}")
        if not 0 < self.dducb_epsilon < 1:
            raise ConfigError(f"dducb epsilon must lie in (0, 1), got {self.dducb_epsilon}")
        if self.dducb_index not in DDUCB_INDEX:
            raise ConfigError(
                f"dducb_index must be one of {', '.join(DDUCB_INDEX)}, got {self.dducb_index!r}"
            )
        for name in ("k_prime", "sub_epochs"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"{name} must be a positive integer, got {value!r}")
        for name, choices in (("demab_best_arm", DEMAB_BEST_ARM), ("relay_k_prime", RELAY_K_PRIME)):
            if getattr(self, name) not in choices:
                raise ConfigError(
                    f"{name} must be one of {', '.join(choices)}, got {getattr(self, name)!r}"
                )
        object.__setattr__(self, "extra", _normalise_extra(self.extra))

    def get(self, name: str, default: Any = None) -> Any:
        """The plugin parameter ``name``, or ``default`` when it is not given.

        A given value must be of the default's kind: a number (int or float) for a float
        default, an integer for an int, true/false for a bool, text for a string; anything
        else raises :class:`ConfigError` (``--param epsilon=abc``: one line, exit code 2).
        A default of another type, or none, takes any value.
        """
        for key, value in self.extra:
            if key == name:
                _check_kind(name, value, default)
                return value
        return default

    @property
    def options(self) -> Mapping[str, ParamValue]:
        """The plugin parameters as a read-only mapping."""
        return MappingProxyType(dict(self.extra))


def _check_kind(name: str, value: ParamValue, default: Any) -> None:
    """Refuse a plugin parameter whose value is not of its default's kind."""
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, kind = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float):
        ok, kind = isinstance(value, int | float) and not isinstance(value, bool), "a number"
    elif isinstance(default, str):
        ok, kind = isinstance(value, str), "text"
    else:
        return
    if not ok:
        raise ConfigError(
            f"parameter {name} = {value!r} must be {kind} (its default is {default!r})"
        )


def _normalise_extra(extra: object) -> tuple[tuple[str, ParamValue], ...]:
    """A mapping or pairs of plugin parameters as sorted, checked ``(name, value)`` pairs."""
    if isinstance(extra, Mapping):
        pairs: Iterable = extra.items()
    elif isinstance(extra, list | tuple):
        pairs = extra
    else:
        raise ConfigError(f"plugin parameters must be a mapping of names to values, got {extra!r}")
    out: dict[str, ParamValue] = {}
    for pair in pairs:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ConfigError(f"plugin parameters must be (name, value) pairs, got {pair!r}")
        name, value = pair
        if not isinstance(name, str) or not _NAME.match(name) or name in _BUILT_IN_FIELDS:
            raise ConfigError(
                f"plugin parameter name {name!r} must be an identifier other than "
                f"{', '.join(sorted(_BUILT_IN_FIELDS))}"
            )
        if name in out:
            raise ConfigError(f"plugin parameter {name!r} given twice")
        out[name] = _param_value(name, value)
    if len(out) > MAX_EXTRA:
        raise ConfigError(f"{len(out)} plugin parameters given; at most {MAX_EXTRA}")
    return tuple(sorted(out.items()))


def _param_value(name: str, value: object) -> ParamValue:
    """``value`` as a plain bool, int, finite float or short str (numpy scalars too), or refuse."""
    if isinstance(value, bool | str):
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise ConfigError(f"plugin parameter {name!r}: text longer than {MAX_TEXT} characters")
        return value
    if hasattr(value, "dtype") and getattr(value, "shape", None) == () and value.dtype.kind == "b":
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(float(value)):
        return float(value)
    raise ConfigError(
        f"plugin parameter {name!r} must be a finite number, a string or a boolean, got {value!r}"
    )


_BUILT_IN_FIELDS = frozenset(f.name for f in fields(AlgorithmParams))

#: Each built-in parameter's default in words and what it sets (``mamab algorithms
#: --parameters``; docs/algorithms/<name>.md has the details). ``alpha``'s default is the
#: algorithm's own (its spec's ``default_alpha``).
FIELD_DOCS = {
    "alpha": ("per algorithm", "UCB exploration constant (also --alpha)"),
    "k_prime": (
        "ceil(K/N) + K_G",
        "K': arms an agent plays per epoch (integer >= 1)",
    ),
    "sub_epochs": ("max(1, D)", "sub-epochs per epoch, D the graph's diameter (integer >= 1)"),
    "gossip_exponent": ("3", "phase j ends at t = ceil(j^exponent) (above 1)"),
    "consensus_kappa": ("1", "kappa in P = I - (kappa / max degree) L, in (0, 1]"),
    "demab_radius": ("2", "c in the elimination radius sqrt(c log T / n) (positive)"),
    "demab_best_arm": (
        "shared",
        "an agent with no arm left plays the server's best (shared) "
        "or the arm it last reported (own)",
    ),
    "relay_k_prime": ("agents", "K' = ceil(K/N) + N - 1 (agents) or + K_G (degree)"),
    "dducb_epsilon": ("1/22", "mixing accuracy epsilon, in (0, 1)"),
    "dducb_index": ("every-step", "every-step (the authors' code) or per-stage (Algorithm 1)"),
    "block_exponent": (
        "2",
        "a bad recommender of phase j is blocked to phase ceil(j^this) (above 1)",
    ),
}


def finite_number(value: object) -> bool:
    """An int or float (not a bool) that is finite as a float (an int past float range is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
