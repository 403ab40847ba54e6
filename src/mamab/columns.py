"""Configurations as flat columns: one value per field, the same for every table and figure.

Every field of :class:`~mamab.config.Config` is a column, with the algorithm's parameters
(every field of :class:`~mamab.agents.AlgorithmParams`) flattened beside them, so a field added
to either dataclass becomes a column, a sweep axis and a figure label by itself. ``first_run``
is left out (always 0 for a whole configuration); a graph given as edges (a networkx graph) is
the column ``graph_sha256`` (a digest of its edge list), as an edge-list file is. Light: no
pyarrow, pandas or numba here.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing

from mamab.algorithms.params import AlgorithmParams
from mamab.config import Config

#: Config fields that are no column: the block of runs, and edges (named by ``graph_sha256``).
NOT_COLUMNS = ("first_run", "edges")


def _base_type(hint: object) -> type:
    """int, float, bool or str for a scalar annotation; ``tuple`` (stored as JSON) otherwise,
    also for a union that may hold a tuple (``malicious``: a count or ids)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if any(typing.get_origin(a) is tuple for a in args):
            return tuple
        hint = args[0]
    if typing.get_origin(hint) is typing.Literal:
        hint = type(typing.get_args(hint)[0])
    return hint if hint in (int, float, bool, str) else tuple


def _column_types() -> dict[str, type]:
    """Every configuration field as a flat column, in Config's order, with its Python type."""
    hints = typing.get_type_hints(Config)
    params = typing.get_type_hints(AlgorithmParams)
    columns: dict[str, type] = {}
    for f in dataclasses.fields(Config):
        if f.name in NOT_COLUMNS:
            continue
        if f.name == "params":
            for g in dataclasses.fields(AlgorithmParams):
                columns[g.name] = _base_type(params[g.name])
            continue
        columns[f.name] = _base_type(hints[f.name])
        if f.name == "graph":
            columns["graph_sha256"] = str
    return columns


CONFIG_TYPES = _column_types()
CONFIG_COLUMNS = tuple(CONFIG_TYPES)
PARAM_FIELDS = tuple(g.name for g in dataclasses.fields(AlgorithmParams))
#: Fields that say which strategy runs; every other configuration field is the setting it runs in.
STRATEGY_FIELDS = ("algorithm", *PARAM_FIELDS)


def flat_config(config: dict, graph_sha256: str | None = None) -> dict:
    """A configuration (``Config.to_dict()``) as one value per column of ``CONFIG_COLUMNS``."""
    row = {k: v for k, v in config.items() if k not in ("params", *NOT_COLUMNS)}
    row.update(config.get("params") or {})
    row["graph_sha256"] = graph_sha256
    for name, kind in CONFIG_TYPES.items():
        value = row.get(name)
        if kind is tuple and value is not None:
            row[name] = json.dumps(value)
        elif kind is float and value is not None:
            row[name] = float(value)
    return {name: row.get(name) for name in CONFIG_COLUMNS}


def _tuples(value: object) -> object:
    """JSON lists back to the tuples a frozen dataclass holds."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def nested_config(flat: dict) -> dict:
    """The inverse of ``flat_config`` (columns missing from old tables take Config's defaults)."""
    config = {f.name: _default(f) for f in dataclasses.fields(Config) if f.name != "params"}
    params = {f.name: _default(f) for f in dataclasses.fields(AlgorithmParams)}
    for name in CONFIG_COLUMNS:
        if name not in flat or name == "graph_sha256":
            continue
        value = flat[name]
        if CONFIG_TYPES[name] is tuple and isinstance(value, str):
            value = _tuples(json.loads(value))
        if name in params:
            params[name] = value
        else:
            config[name] = value
    config["params"] = params
    config["first_run"] = 0
    return config


def _default(f: dataclasses.Field) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None  # a required field (algorithm, agents, ...): required columns always hold it


def field_text(value: object) -> str:
    """A configuration value for people: floats as %g, None (the paper's default) as 'default'.

    A long vector (arm means) is shortened to its first values and a digest of all of them, so
    a label stays readable and still tells two vectors apart.
    """
    if value is None:
        return "default"
    if isinstance(value, float):
        return format(value, "g")
    if isinstance(value, str) and value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            return value
        if items and all(isinstance(i, list) and len(i) == 2 for i in items):
            return ", ".join(f"{k}={field_text(v)}" for k, v in items)  # (name, value) pairs
        if len(items) > 4:
            import hashlib

            digest = hashlib.sha256(value.encode()).hexdigest()[:6]
            head = ", ".join(field_text(v) for v in items[:3])
            return f"[{head}, … ({len(items)}) #{digest}]"
        return "[" + ", ".join(field_text(v) for v in items) + "]"
    return str(value)
