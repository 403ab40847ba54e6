"""Malicious agents: who lies and what a liar sends, as pure functions of the run's seed.

Words, one per concept, matching the public surface: *malicious* is the run's setting (how many,
or which ids: ``Config.malicious``, ``--malicious``, ``malicious_agents``); a *liar* is one such
agent (the per-agent ``liar`` flag and column, ``Liars``); to *forge* is to rewrite a message
(an algorithm's ``forge``); the *attack* is the rule a liar's arm follows (``Config.attack``).

A malicious agent runs its algorithm like any peer (it plays, learns and talks on schedule), but
every recommendation it sends is forged: the arm is replaced by the attack's arm, the message keeps
its size. Which agents lie is drawn once per run from the run's 'malicious' stream (or given as
ids), and a random attack's arm is a counter-based hash of (run's attack key, step, sender,
receiver), so every engine forges the same arm for the same message whatever order it sends in.

Attacks (``Config.attack``), all knowing the arm means, as an adversary may:

- ``worst``: the arm of lowest mean (lowest index on ties) other than the best arm;
- ``best-second``: the best arm other than the best arm, the hardest lie to catch;
- ``random``: a uniformly random arm other than the best arm, drawn per message;
- ``truthful``: the truth (a control: results equal the honest run's).

"The best arm" is the lowest-index arm of highest mean; with one arm every attack sends it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mamab.seeding import rng

if TYPE_CHECKING:
    from mamab.algorithms.base import Message
    from mamab.config import Config

ATTACKS = ("worst", "random", "best-second", "truthful")
TRUTHFUL, FIXED, RANDOM = 0, 1, 2  # how an attack picks its arm
ATTACK_SALT = 0x7A3DD5B1C9E84F21  # the random attack's hash key is the attack key XOR this


def draw_liars(
    seed: int, run: int, n_agents: int, malicious: int | tuple[int, ...]
) -> tuple[np.ndarray, int]:
    """(mask of the run's liars, the run's attack key), from the run's 'malicious' stream.

    ``malicious`` is a number m (m agents drawn uniformly without replacement, a new draw every
    run) or the ids themselves. With no malicious agent nothing is drawn: the mask is all False.
    """
    mask = np.zeros(n_agents, dtype=np.bool_)
    if not malicious:
        return mask, 0
    stream = rng(seed, run, "malicious")
    key = int(stream.integers(1 << 63))
    if isinstance(malicious, int):
        mask[stream.permutation(n_agents)[:malicious]] = True
    else:
        mask[list(malicious)] = True
    return mask, key


@dataclass(frozen=True)
class AttackPlan:
    """What a liar sends in one run: an attack's rule, resolved on the run's arm means."""

    code: int  # TRUTHFUL, FIXED or RANDOM
    fixed: int  # the arm a FIXED attack always sends
    pool: np.ndarray  # (arms,) the arms a RANDOM attack draws from: every arm but the best
    key: int  # the run's attack key

    def arm(self, step: int, sender: int, receiver: int, truth: int) -> int:
        """The arm liar ``sender`` sends ``receiver`` after ``step`` instead of ``truth``."""
        if self.code == TRUTHFUL:
            return truth
        if self.code == FIXED:
            return self.fixed
        from mamab.faults import message_uniform  # numba: not imported with a Config

        u = message_uniform(self.key ^ ATTACK_SALT, step, 0, sender, receiver)
        return int(self.pool[min(int(u * self.pool.size), self.pool.size - 1)])


def attack_plan(attack: str, means: np.ndarray, key: int) -> AttackPlan:
    """The plan of ``attack`` on arms of ``means``."""
    means = np.asarray(means, dtype=np.float64)
    best = int(np.argmax(means))
    others = np.delete(np.arange(means.size, dtype=np.int64), best)
    if attack == "truthful" or others.size == 0:
        return AttackPlan(TRUTHFUL, best, np.array([best], dtype=np.int64), key)
    if attack == "random":
        return AttackPlan(RANDOM, best, others, key)
    rest = means[others]
    pick = np.argmin(rest) if attack == "worst" else np.argmax(rest)
    return AttackPlan(FIXED, int(others[pick]), others, key)


@dataclass(frozen=True)
class Liars:
    """The malicious agents of one run and how they rewrite what they send."""

    mask: np.ndarray  # (agents,) True for a malicious agent
    plan: AttackPlan
    forge: Callable[[Any, int, int], Any]  # the algorithm's registry ``forge``

    def __call__(self, message: Message) -> Message:
        """``message`` as its sender sends it: forged when the sender lies (a truthful liar's
        messages are left as they are; a server node, past the agents, never lies)."""
        sender = message.sender
        if self.plan.code == TRUTHFUL or sender >= self.mask.size or not self.mask[sender]:
            return message
        arm = self.plan.arm(message.stamp, sender, message.receiver, -1)
        return dataclasses.replace(message, payload=self.forge(message.payload, arm, sender))


def liars_of(config: Config, run: int, means: np.ndarray) -> tuple[np.ndarray, Liars | None]:
    """(mask of the run's liars, their :class:`Liars`, or None when nobody lies)."""
    from mamab.algorithms.registry import lookup

    mask, key = draw_liars(config.seed, run, config.agents, config.malicious)
    if not mask.any():
        return mask, None
    plan = attack_plan(config.attack, means, key)
    return mask, Liars(mask, plan, lookup(config.algorithm).forge)
