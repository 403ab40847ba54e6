import numpy as np
import pytest

from mamab.errors import ConfigError
from mamab.problem import (
    CACHE_VALUES,
    CHUNK,
    MAX_CHUNK_VALUES,
    MIN_CACHE_STEPS,
    Problem,
    block_steps,
    cache_steps,
    noise_chunks,
)
from mamab.seeding import rng


@pytest.mark.parametrize("reward", ["bernoulli", "gaussian"])
def test_noise_table_is_independent_of_chunk_size(reward):
    whole = np.concatenate(list(noise_chunks(rng(5, 2, "noise"), reward, 3, 1000, chunk=1000)))
    for chunk in (1, 7, 256, 4096):
        parts = np.concatenate(list(noise_chunks(rng(5, 2, "noise"), reward, 3, 1000, chunk=chunk)))
        assert np.array_equal(whole, parts)
    assert whole.shape == (1000, 3)


@pytest.mark.parametrize("reward", ["bernoulli", "gaussian"])
def test_reused_buffer_holds_the_same_numbers(reward):
    fresh = list(noise_chunks(rng(5, 2, "noise"), reward, 3, 1000, chunk=256))
    blocks = noise_chunks(rng(5, 2, "noise"), reward, 3, 1000, chunk=256, reuse=True)
    seen = []
    for block, expected in zip(blocks, fresh, strict=True):
        assert np.array_equal(block, expected)  # valid until the next block is drawn
        seen.append(block)
    assert all(np.shares_memory(seen[0], block) for block in seen)  # one buffer
    assert seen[-1].shape == (1000 - 3 * 256, 3)


@pytest.mark.parametrize(
    ("agents", "steps"),
    [
        (1, CHUNK),
        (16, CHUNK),
        (20, CACHE_VALUES // 20),
        (150, 436),
        (500, 131),
        (2000, MIN_CACHE_STEPS),
    ],
)
def test_a_block_within_the_cache(agents, steps):
    """At most CHUNK steps and CACHE_VALUES numbers, at least MIN_CACHE_STEPS steps."""
    assert cache_steps(agents) == steps
    blocks = noise_chunks(
        rng(0, 0, "noise"), "bernoulli", agents, 3 * steps + 1, cache_steps(agents), reuse=True
    )
    assert [b.shape[0] for b in blocks] == [steps, steps, steps, 1]


def test_blocks_never_pass_the_largest_block():
    """MAX_CHUNK_VALUES caps a block within the cache too (64 steps of 300000 agents would not)."""
    n = 300_000
    assert block_steps(n, cache=True) == block_steps(n) == MAX_CHUNK_VALUES // n == 55
    assert block_steps(150) == CHUNK and block_steps(150, cache=True) == 436


def test_agents_alone_read_blocks_within_the_cache(monkeypatch):
    """no-communication's spec asks for blocks of cache_steps steps (``cache_blocks``); the
    others draw CHUNK."""
    import mamab.engine.recording as recording
    from mamab import Config, simulate

    asked = []
    real = recording.noise_chunks
    monkeypatch.setattr(
        recording, "noise_chunks", lambda *a, **k: asked.append(a[4]) or real(*a, **k)
    )
    for algorithm in ("no-communication", "full-communication"):
        simulate(Config(algorithm, agents=150, arms=5, horizon=1000, graph="ring"), jobs=1)
    assert asked == [436, CHUNK]


def test_streams_are_distinct_per_run_and_purpose():
    draws = {(r, p): rng(1, r, p).random() for r in range(3) for p in ("means", "graph", "noise")}
    assert len(set(draws.values())) == len(draws)
    assert rng(1, 2, "noise").random() == draws[(2, "noise")]


def test_a_stream_is_its_run_s_sequence_for_that_purpose():
    """Purpose i of run r of root seed s is SeedSequence(s, spawn_key=(r, i)), whether rng makes
    it alone or run_streams makes the run's seven (the streams of every earlier result)."""
    from mamab.seeding import STREAMS, run_streams

    for seed, run in ((0, 0), (7, 3), (2**40, 29)):
        sequences = run_streams(seed, run)
        for i, purpose in enumerate(STREAMS):
            sequence = np.random.SeedSequence(seed, spawn_key=(run, i))
            expected = np.random.Generator(np.random.PCG64(sequence)).random(4)
            assert np.array_equal(rng(seed, run, purpose).random(4), expected)
            assert sequences[purpose].spawn_key == (run, i)


def test_rewards_follow_the_noise_convention():
    p = Problem(np.array([0.2, 0.7]))
    assert p.reward_of(1, 0.69) == 1.0 and p.reward_of(1, 0.7) == 0.0
    g = Problem(np.array([0.2, 0.7]), "gaussian", 2.0)
    assert g.reward_of(0, -1.5) == 0.2 + 2.0 * -1.5
    assert np.allclose(p.gaps, [0.5, 0.0])


def test_bad_problems():
    with pytest.raises(ConfigError, match="sigma"):
        Problem(np.array([0.5]), "gaussian", 0.0)
    with pytest.raises(ConfigError, match="unknown reward"):
        Problem(np.array([0.5]), "poisson")
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        Problem(np.array([1.5]))
