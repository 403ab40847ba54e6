"""Pause one node of a live fleet at a step until released: a state a test can wait for.

A test of a fleet must not guess how far a run has got after some seconds (that depends on the
machine's speed). Instead it sets ``MAMAB_LIVE_HOLD="<node>:<step>:<path>"`` in the environment
of ``mamab agent`` (``mamab live`` passes its environment on to its nodes): node ``<node>``, once
it has played step ``<step>`` and run that step's exchange, writes its process id to ``<path>``
and waits until ``<path>`` is removed. The test waits for the file (the state "node 2 has
played step 1000 and is holding"), does what it wants (kill the node, knock on its port), and
removes the file to let the node go on. A sync node's neighbours meanwhile wait for it as for
any slow node (up to ``--timeout``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mamab.errors import ConfigError

ENV = "MAMAB_LIVE_HOLD"
POLL_SECONDS = 0.01


@dataclass(frozen=True)
class Hold:
    """Hold after step ``step``: announce it in ``path`` (our pid), wait until it is removed."""

    step: int
    path: Path

    def wait(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(f"{os.getpid()}\n")
        os.replace(tmp, self.path)  # atomic: a reader sees no file or the whole pid
        while self.path.exists():
            time.sleep(POLL_SECONDS)


def hold_from_env(node_id: int, environ: Mapping[str, str] = os.environ) -> Hold | None:
    """The hold ``MAMAB_LIVE_HOLD`` asks of node ``node_id``, if any (ConfigError if malformed)."""
    value = environ.get(ENV)
    if not value:
        return None
    try:
        node, step, path = value.split(":", 2)
        hold = Hold(int(step), Path(path))
        node_number = int(node)
    except ValueError:
        raise ConfigError(f"{ENV}={value!r} is not <node>:<step>:<path>") from None
    if hold.step < 1 or not path:
        raise ConfigError(f"{ENV}={value!r}: the step must be at least 1 and the path given")
    return hold if node_number == node_id else None
