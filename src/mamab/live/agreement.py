"""What every node of a live run must agree on: the run's configuration record and its digest.

Nodes that disagree about the run (another seed, run, alpha, K, algorithm, liars, graph or
roster) would compute garbage in silence. Each node sends its record in its hello
(mamab.live.link); a node receiving a record whose digest differs from its own refuses it
with one line naming the first differing field, and exits non-zero.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mamab.config import Config
from mamab.errors import ConfigError
from mamab.topology import Topology

#: Config fields that are not the run's: a live node plays one run (``run`` says which).
_NOT_THE_RUNS = ("runs", "first_run", "grid_points", "grid_style")


class Disagreement(ConfigError):
    """A neighbour runs another configuration: refused, in one line naming the field."""


def _digest_of(value: Any) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


def canonical(value: Any) -> bytes:
    """The canonical JSON of ``value``: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def run_record(
    config: Config, run: int, sync: bool, topology: Topology | None = None, roster: Any = None
) -> dict:
    """The record of run ``run`` of ``config`` as a node plays it: the Config's fields (``params``
    flattened as ``params.<name>``), the run, the mode, and digests of the graph the run uses
    and of the roster (ids, addresses, public keys)."""
    data = config.to_dict()
    params = data.pop("params")
    record: dict[str, Any] = {k: v for k, v in data.items() if k not in _NOT_THE_RUNS}
    record.update({f"params.{k}": v for k, v in params.items()})
    if topology is not None:
        if Path(config.graph).is_file():  # its path may differ between hosts, its edges may not
            record["graph"] = "(a file: see graph_digest)"
        record["graph_digest"] = _digest_of([list(n) for n in topology.neighbours])
    record["run"] = run
    record["mode"] = "sync" if sync else "async"
    if roster is not None:
        record["roster_digest"] = _digest_of(
            [[n.id, n.address, n.public_key] for n in roster.nodes]
        )
    return json.loads(canonical(record))  # what travels: tuples become lists


def digest(record: dict) -> bytes:
    """SHA-256 of the record's canonical JSON (32 bytes)."""
    return hashlib.sha256(canonical(record)).digest()


def differing_field(mine: dict, theirs: dict) -> str:
    """The first field (sorted by name) where two records differ, shown with both values."""
    for key in sorted(set(mine) | set(theirs)):
        if key not in theirs or key not in mine or canonical(mine[key]) != canonical(theirs[key]):
            return f"{key}: {mine.get(key, '(none)')!r} here, {theirs.get(key, '(none)')!r} there"
    return "the records are equal but their digests differ"


def refuse(me: int, peer: int, mine: dict, theirs: dict) -> Disagreement:
    """The one-line error of node ``me`` refusing neighbour ``peer``'s record."""
    return Disagreement(
        f"node {me} refuses node {peer}: it runs another configuration "
        f"({differing_field(mine, theirs)})"
    )


__all__ = ["Disagreement", "canonical", "differing_field", "digest", "refuse", "run_record"]
