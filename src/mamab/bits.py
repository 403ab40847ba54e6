"""Message sizes in bits: what the simulator counts and what the live wire sends (one owner for
both, so :mod:`mamab.wire` depends on no algorithm's module)."""

from __future__ import annotations

#: A reward (or any float) on the wire: an IEEE double.
REWARD_BITS = 64
#: A one-bit signal: GosInE's pull request, DEMAB's "send your arms".
SIGNAL_BITS = 1


def index_bits(n_arms: int) -> int:
    """Bits of one arm index: ceil(log2 K), at least 1."""
    return max(1, (n_arms - 1).bit_length())


def agent_bits(n_agents: int) -> int:
    """Bits of one agent id: ceil(log2 N), at least 1."""
    return max(1, (n_agents - 1).bit_length())


def count_bits(n_arms: int) -> int:
    """Bits of a number of arms in 0..K (DEMAB's count)."""
    return max(1, n_arms.bit_length())
