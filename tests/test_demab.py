"""DEMAB: schedule, communication independent of T, the server's announcements, idle agents."""

import numpy as np

from mamab import Config, simulate
from mamab.agents import make_agents
from mamab.algorithms.demab.schedule import phase_ends, redivide, stage_one_length, unbalanced
from mamab.topology import complete


def test_schedule():
    assert stage_one_length(100_000, 10, 100) == 100
    ends = phase_ends(100_000, 10, 100)
    assert ends[0] == 100 and np.all(np.diff(ends) == 100 * 2 ** np.arange(1, ends.size))
    assert ends[-1] < 100_000
    assert (
        unbalanced([5, 2])
        and not unbalanced([4, 2])
        and unbalanced([3, 0])
        and not unbalanced([2, 0])
    )
    assert redivide([9, 1, 5, 3, 7], 2) == [[1, 5, 9], [3, 7]]


def messages(horizon, n=5, k=50, seed=0):
    result = simulate(Config("demab", agents=n, arms=k, horizon=horizon, runs=4, seed=seed))
    return result.counts["messages_sent"].mean(), result


def test_communication_stops_growing_with_T_and_grows_with_log_NK():
    # Phases last D1·2^l with D1 ≈ T/(NK): about log2(NK) of them whatever T is.
    small, _ = messages(50_000)
    large, _ = messages(400_000)
    assert abs(large - small) <= 0.1 * small
    bigger, _ = messages(400_000, n=10, k=400)
    assert bigger > large
    per_phase = 2  # a report and a count, when no re-division happens
    assert large <= per_phase * (np.log2(5 * 50) + 3)


def drive(n=4, k=8, horizon=20_000, seed=1):
    """Run the online agents by hand, recording what the server announces and idle agents play."""
    agents = make_agents("demab", complete(n), k, horizon, rng=np.random.default_rng(seed))
    players, server = agents[:n], agents[n]
    rng = np.random.default_rng(seed)
    means = rng.random(k)
    eliminated: set[int] = set()
    idle_plays = []
    for _ in range(horizon):
        for agent in players:
            idle = not agent.active
            arm = agent.select_arm()
            if idle:
                idle_plays.append((arm, agent.announced))
            agent.observe(arm, float(rng.random() < means[arm]))
        server.tick()  # the server plays no arm but keeps the protocol clock
        before = {a for agent in players for a in agent.active}
        while outbox := [m for agent in agents for m in agent.outgoing()]:
            for message in outbox:
                if message.payload[0] == "best":
                    assert message.payload[1] not in eliminated, (
                        "server announced an eliminated arm"
                    )
                agents[message.receiver].receive(message)
        after = {a for agent in players for a in agent.active}
        eliminated |= before - after
    return server, idle_plays, eliminated, means


def test_server_never_announces_an_eliminated_arm_and_idle_agents_play_it():
    server, idle_plays, eliminated, means = drive()
    assert server.announced and eliminated
    assert idle_plays, "some agent ran out of arms in this instance"
    assert all(arm == announced for arm, announced in idle_plays)
    assert server.announced[-1] == int(np.argmax(means))


def test_regret_is_finite_and_worse_than_no_communication():
    # The paper's observation (Fig. 1): DEMAB's regret exceeds no communication's.
    demab = simulate(Config("demab", agents=10, arms=100, horizon=30_000, runs=5, seed=2))
    alone = simulate(
        Config("no-communication", agents=10, arms=100, horizon=30_000, runs=5, seed=2)
    )
    assert np.all(np.isfinite(demab.final_regret)) and np.all(demab.final_regret < 30_000)
    assert np.median(demab.final_regret.mean(1)) > np.median(alone.final_regret.mean(1))
