"""A live node's checkpoint: its state between two steps, written atomically, for ``--resume``.

The file holds (pickle) the node's agent, counters, held frames, links (sequence numbers,
outboxes, what it has taken from each neighbour), the host loop's regret so far, the run's
configuration digest and the node's incarnation. It is written with the project's atomic
writer (the mode a plain ``open`` gives: the umask decides; it holds no secret) at the end of
a step with an exchange at most every ``every`` seconds, and after any step once ``4 × every``
seconds passed without one. A node acknowledges its neighbours' frames only once a checkpoint
holds them (LiveNode.saved), so a resumed node gets again, from their outboxes, everything it
had taken since. Only load a checkpoint this user wrote: pickle runs code.
"""

from __future__ import annotations

import pickle
import time
from pathlib import Path

from mamab.errors import ConfigError
from mamab.live.node import LiveNode
from mamab.storage import atomic_write

FORMAT = 2  # 2: the node's 'waits for nobody' (_alone) is kept


class Checkpoints:
    """Where and how often node checkpoints go (see the module docstring)."""

    def __init__(self, path: Path, every: float = 2.0):
        if every < 0:
            raise ConfigError(f"--checkpoint-every must be at least 0, got {every}")
        self.path = Path(path)
        self.every = every
        self._last = -float("inf")
        self.written = 0
        self.seconds = 0.0  # spent writing them

    def due(self, node: LiveNode) -> bool:
        """Whether a checkpoint is due after the step ``node`` has just finished."""
        elapsed = time.monotonic() - self._last
        return elapsed >= self.every and (node.last_rounds > 0 or elapsed >= 4 * self.every)

    def save(self, node: LiveNode, regret: float) -> None:
        """Write ``node``'s state (and the host's ``regret``) atomically; then acknowledge."""
        start = time.monotonic()
        data = pickle.dumps(
            {
                "format": FORMAT,
                "node": node.agent.agent_id,
                "digest": node.digest,
                "incarnation": node.incarnation,
                "regret": regret,
                "state": node.state(),
            },
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        atomic_write(self.path, lambda tmp: tmp.write_bytes(data))
        node.saved()
        self._last = time.monotonic()
        self.written += 1
        self.seconds += self._last - start


def resume(node: LiveNode, path: Path) -> float:
    """Put ``node`` back in the state of its checkpoint at ``path``, as its next incarnation;
    the host's regret so far. ConfigError (one line) if it is not this node's and run's."""
    try:
        data = pickle.loads(Path(path).read_bytes())
        fmt, who, digest = data["format"], data["node"], data["digest"]
    except FileNotFoundError:
        raise ConfigError(f"no checkpoint at {path} to resume from") from None
    except Exception as err:  # any unpickling failure: a damaged or foreign file
        raise ConfigError(
            f"{path} is not a live node's checkpoint ({type(err).__name__})"
        ) from None
    if fmt != FORMAT:
        raise ConfigError(f"{path}: checkpoint format {fmt}, this mamab reads {FORMAT}")
    if who != node.agent.agent_id:
        raise ConfigError(f"{path} is node {who}'s checkpoint, not node {node.agent.agent_id}'s")
    if digest != node.digest:
        raise ConfigError(f"{path} is a checkpoint of another run or configuration")
    node.restore(data["state"], data["incarnation"] + 1)
    return float(data["regret"])


__all__ = ["Checkpoints", "resume"]
