"""A reusable conformance test for online agents (in the spirit of dm_env's test mixin).

Subclass :class:`AgentConformance` together with ``unittest.TestCase`` (pytest collects it) and
implement :meth:`make_agents`. The mixin drives the agents on small graphs and checks the
protocol a host relies on: arms in range, messages only to neighbours, correctly addressed and
stamped with the sender's clock, determinism, that a refused message (malformed, misaddressed,
from a stranger or from the future) raises :class:`InvalidMessage` and changes nothing, and that
messages delivered one exchange late are taken without error.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import numpy as np

from mamab import topology as topo
from mamab.agents.base import Agent, Message
from mamab.errors import InvalidMessage

Trace = list[tuple[int, ...]]


class AgentConformance:
    """Mixin: ``make_agents(topology, n_arms, horizon)`` must return one fresh agent per node."""

    n_arms = 12
    horizon = 400

    def make_agents(self, topology: topo.Topology, n_arms: int, horizon: int) -> list[Agent]:
        raise NotImplementedError

    def malformed_payloads(self, message: Message, n_arms: int) -> list[Any]:
        """Payloads the agent must refuse; override for algorithms with structured payloads."""
        return ["junk", None, -1, n_arms, 1.5, True]

    def graphs(self) -> list[topo.Topology]:
        return [topo.complete(4), topo.ring(5), topo.star(4), topo.line(3)]

    def network(self, graph: topo.Topology) -> topo.Topology:
        """The graph messages may use (override for algorithms with a server node)."""
        return graph

    # -- driving --

    def _drive(
        self,
        agents: list[Agent],
        graph: topo.Topology,
        seed: int,
        probe: bool = False,
        late: bool = False,
    ) -> Trace:
        """Play ``horizon`` steps; with ``late``, every message arrives one exchange late."""
        rewards = np.random.default_rng(seed)
        links = self.network(graph)
        assert len(agents) == links.n_agents, "one agent object per node of the network"
        trace: Trace = []
        held: list[Message] = []
        for step in range(1, self.horizon + 1):
            arms = []
            for agent in agents:
                if not agent.plays:
                    agent.tick()
                    continue
                arm = agent.select_arm()
                assert isinstance(arm, int | np.integer) and 0 <= arm < self.n_arms, (
                    f"arm {arm} out of range"
                )
                agent.observe(int(arm), float(rewards.random() < (arm + 1) / (self.n_arms + 1)))
                arms.append(int(arm))
            trace.append(tuple(arms))
            for message in held:
                agents[message.receiver].receive(message)
            held = []
            while True:
                batch = [m for agent in agents for m in agent.outgoing()]
                if not batch:
                    break
                for message in batch:
                    self._check_sent(message, links, step)
                    if late:
                        held.append(message)
                        continue
                    if probe:
                        self._probe_refusals(agents[message.receiver], message, links)
                    agents[message.receiver].receive(message)
                    trace.append(("msg", message.sender, message.receiver, message.bits))
        return trace

    def _check_sent(self, message: Message, graph: topo.Topology, step: int) -> None:
        assert isinstance(message, Message)
        assert graph.are_neighbours(message.sender, message.receiver), (
            f"agent {message.sender} messaged non-neighbour {message.receiver}"
        )
        assert isinstance(message.bits, int) and message.bits > 0
        assert message.stamp == step, f"message stamped {message.stamp}, sent after step {step}"

    def _probe_refusals(self, receiver: Agent, message: Message, graph: topo.Topology) -> None:
        strangers = [
            v
            for v in range(graph.n_agents)
            if v != receiver.agent_id and not graph.are_neighbours(v, receiver.agent_id)
        ]
        bad = [
            dataclasses.replace(message, payload=p)
            for p in self.malformed_payloads(message, self.n_arms)
        ]
        bad += [dataclasses.replace(message, sender=v) for v in strangers[:1]]
        bad += [dataclasses.replace(message, receiver=(receiver.agent_id + 1) % graph.n_agents)]
        bad += [dataclasses.replace(message, stamp=s) for s in (message.stamp + 1, -1, 2.5, None)]
        bad += [("not", "a", "message")]
        for wrong in bad:
            before = pickle.dumps(receiver.__dict__)
            try:
                receiver.receive(wrong)
            except InvalidMessage:
                pass
            else:
                raise AssertionError(
                    f"agent {receiver.agent_id} accepted malformed message {wrong!r}"
                )
            assert pickle.dumps(receiver.__dict__) == before, (
                "a refused message changed the agent's state"
            )

    # -- the checks --

    def test_arms_in_range_and_messages_along_edges(self) -> None:
        for graph in self.graphs():
            self._drive(self.make_agents(graph, self.n_arms, self.horizon), graph, seed=1)

    def test_deterministic(self) -> None:
        for graph in self.graphs():
            first = self._drive(self.make_agents(graph, self.n_arms, self.horizon), graph, seed=7)
            second = self._drive(self.make_agents(graph, self.n_arms, self.horizon), graph, seed=7)
            assert first == second

    def test_refused_messages_change_nothing(self) -> None:
        for graph in self.graphs():
            clean = self._drive(self.make_agents(graph, self.n_arms, self.horizon), graph, seed=3)
            probed = self._drive(
                self.make_agents(graph, self.n_arms, self.horizon), graph, seed=3, probe=True
            )
            assert clean == probed, "probing with refused messages changed the trajectory"

    def test_late_messages_are_taken(self) -> None:
        for graph in self.graphs():
            self._drive(self.make_agents(graph, self.n_arms, self.horizon), graph, 11, late=True)

    def test_copy_is_independent(self) -> None:
        graph = self.graphs()[0]
        agents = self.make_agents(graph, self.n_arms, self.horizon)
        twin = copy.deepcopy(agents)
        assert self._drive(agents, graph, seed=5) == self._drive(twin, graph, seed=5)
