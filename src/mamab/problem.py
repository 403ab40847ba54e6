"""The bandit instance: arm means, reward model and the per-(agent, step) noise table.

Noise is drawn independently of the arm played (design notes): a Bernoulli reward is
``1.0 if u[t, n] < mu[a] else 0.0`` and a Gaussian one ``mu[a] + sigma * z[t, n]``. Two engines
that consume the same table therefore produce identical trajectories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from mamab.errors import ConfigError
from mamab.suggest import unknown

REWARD_MODELS = ("bernoulli", "gaussian")
#: Largest Gaussian sigma and arm-mean magnitude. A reward is then below 1e102 in magnitude (|z|
#: never reaches 10 in 2^62 draws), and sums of 2^62 rewards, their squares and consensus
#: averages stay far from float64 overflow (1.8e308), so both engines compute with finite
#: numbers only. Beyond it a reward overflows to inf (sigma = 1e308) and the engines would part.
MAX_MAGNITUDE = 1e100
CHUNK = 4096  # noise steps drawn at once by every engine, at most
MAX_CHUNK_VALUES = 1 << 24  # noise numbers drawn at once, at most
#: Noise numbers of a block of 512 KB, half a second-level cache of 1 MB, for kernels that read a
#: block column by column, a tile of agents through all its steps (:func:`cache_steps`)
CACHE_VALUES = 1 << 16
MIN_CACHE_STEPS = 64  # steps of such a block at least, however many the agents


def chunk_steps(n_agents: int, chunk: int = CHUNK) -> int:
    """Steps of a noise block of ``n_agents`` agents: at most ``chunk`` and MAX_CHUNK_VALUES
    numbers, at least one step."""
    return max(1, min(chunk, MAX_CHUNK_VALUES // n_agents))


def cache_steps(n_agents: int) -> int:
    """Steps of a noise block of ``n_agents`` agents within a core's second-level cache: at most
    CHUNK steps and CACHE_VALUES numbers, at least MIN_CACHE_STEPS steps (436 at N = 150; beyond
    N = 1024 a block of 64 steps is larger, and :func:`chunk_steps` may cap it further). A
    kernel that plays a tile of agents through a whole block, then the next tile (agents alone),
    reads each tile's columns just after numpy wrote the block, from that cache rather than the
    next (no-communication 0.91-0.96 times the time at N = 100-150; benchmarks/README.md,
    twentieth round). The relay, whose windows end with each block, paid more for that than it
    gained (1.02-1.05)."""
    return min(CHUNK, max(MIN_CACHE_STEPS, CACHE_VALUES // n_agents))


def block_steps(n_agents: int, cache: bool = False) -> int:
    """Steps of the noise blocks a run of ``n_agents`` agents draws: :func:`cache_steps` for a
    kernel that asks for blocks within the cache (``FastEngine.cache_blocks``), else CHUNK; at
    most MAX_CHUNK_VALUES numbers either way (:func:`chunk_steps`)."""
    return chunk_steps(n_agents, cache_steps(n_agents) if cache else CHUNK)


@dataclass(frozen=True)
class Problem:
    """Arm means and reward model of one run."""

    means: np.ndarray
    reward: str = "bernoulli"
    sigma: float = 1.0

    def __post_init__(self) -> None:
        check_reward(self.reward, self.sigma)
        means = np.asarray(self.means, dtype=np.float64)
        if means.ndim != 1 or means.size == 0:
            raise ConfigError("arm means must be a non-empty 1-D list")
        if not np.all(np.isfinite(means)) or np.abs(means).max() > MAX_MAGNITUDE:
            raise ConfigError(
                f"arm means must be finite numbers of magnitude at most {MAX_MAGNITUDE:g}"
            )
        if self.reward == "bernoulli" and (means.min() < 0 or means.max() > 1):
            raise ConfigError("Bernoulli arm means must lie in [0, 1]")
        object.__setattr__(self, "means", means)

    @property
    def n_arms(self) -> int:
        return int(self.means.size)

    @property
    def gaps(self) -> np.ndarray:
        """mu* - mu_i per arm: the per-step pseudo-regret of playing arm i."""
        return self.means.max() - self.means

    def reward_of(self, arm: int, noise: float) -> float:
        """The reward of ``arm`` given this step's noise value for the agent."""
        mu = float(self.means[arm])
        if self.reward == "bernoulli":
            return 1.0 if noise < mu else 0.0
        return mu + self.sigma * noise


def check_reward(reward: str, sigma: float) -> None:
    if reward not in REWARD_MODELS:
        raise ConfigError(unknown("reward model", reward, REWARD_MODELS))
    if isinstance(sigma, bool) or not isinstance(sigma, int | float | np.floating):
        raise ConfigError(f"Gaussian sigma must be a number, got {sigma!r}")
    if not (np.isfinite(sigma) and 0 < sigma <= MAX_MAGNITUDE):
        raise ConfigError(
            f"Gaussian sigma must be a positive finite number at most {MAX_MAGNITUDE:g}, got {sigma}"
        )


def draw_means(rng: np.random.Generator, n_arms: int) -> np.ndarray:
    """Arm means i.i.d. U(0, 1), as in the paper's evaluation."""
    return rng.random(n_arms)


def noise_chunks(
    rng: np.random.Generator,
    reward: str,
    n_agents: int,
    horizon: int,
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
    reuse: bool = False,
) -> Iterator[np.ndarray]:
    """Yield the noise table in blocks of at most ``chunk`` steps, shape (steps, n_agents).

    Values are drawn step-major in one stream, so the table is the same whatever ``chunk`` is.
    A block holds at most ``MAX_CHUNK_VALUES`` numbers (128 MiB), fewer steps for many agents.
    ``progress`` (a progress bar's update) gets the agent-steps of each block once it is used.
    ``reuse``: every block is drawn into the same buffer (the same numbers), so a block is valid
    only until the next is asked for; a fresh array per block costs its pages' first touch
    again, about twice the drawing itself.
    """
    if chunk <= 0:
        raise ConfigError("noise chunk must be positive")
    chunk = chunk_steps(n_agents, chunk)
    draw = rng.random if reward == "bernoulli" else rng.standard_normal
    buffer = np.empty((min(chunk, horizon), n_agents)) if reuse else None
    for start in range(0, horizon, chunk):
        steps = min(chunk, horizon - start)
        yield draw((steps, n_agents)) if buffer is None else draw(out=buffer[:steps])
        if progress is not None:
            progress(steps * n_agents)
