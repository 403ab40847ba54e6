"""Every online agent passes the reusable conformance mixin."""

import unittest

from mamab.agents import AlgorithmParams, make_agents
from mamab.testing import AgentConformance


class _ByName(AgentConformance):
    algorithm = ""

    def make_agents(self, topology, n_arms, horizon):
        return make_agents(self.algorithm, topology, n_arms, horizon, AlgorithmParams(k_prime=2))


class TestLccUcb(_ByName, unittest.TestCase):
    algorithm = "lcc-ucb"


class TestLccUcbGraph(_ByName, unittest.TestCase):
    algorithm = "lcc-ucb-graph"


class TestLccUcbRelay(_ByName, unittest.TestCase):
    algorithm = "lcc-ucb-relay"

    def malformed_payloads(self, message, n_arms):
        return ["junk", (), ((0,),), ((0, n_arms),), ((0, -1),), ((99, 0),), ((True, 0),), (0, 1)]


class TestNoCommunication(_ByName, unittest.TestCase):
    algorithm = "no-communication"


class TestFullCommunication(_ByName, unittest.TestCase):
    algorithm = "full-communication"

    def malformed_payloads(self, message, n_arms):
        return ["junk", (n_arms, 1.0), (-1, 0.0), (0, float("nan")), (0, "1"), (0,), (0, 1.0, 2)]


class TestGosine(_ByName, unittest.TestCase):
    algorithm = "gosine"

    def malformed_payloads(self, message, n_arms):
        return ["junk", ("pull", 1), ("arm",), ("arm", n_arms), ("arm", -1), ("arm", "3"), 5]


class TestCoopUcb2(_ByName, unittest.TestCase):
    algorithm = "coop-ucb2"
    horizon = 150

    def malformed_payloads(self, message, n_arms):
        import numpy as np

        good = np.zeros(n_arms)
        return ["junk", (good,), (good, np.zeros(n_arms + 1)), (np.full(n_arms, -1.0), good),
                (np.full(n_arms, np.nan), good), (good.astype(np.float32), good), ([0.0] * n_arms, good)]  # fmt: skip


class TestDemab(_ByName, unittest.TestCase):
    algorithm = "demab"
    horizon = 600

    def network(self, graph):
        from mamab.topology import server_star

        return server_star(graph.n_agents)

    def malformed_payloads(self, message, n_arms):
        return ["junk", (), ("best",), ("best", n_arms, 0.5), ("best", 0, float("nan")), ("assign", (n_arms,)),
                ("assign", 3), ("count", -1), ("count", n_arms + 1), ("arms", ("x",)), ("report", -1, 0.0),
                ("warp", 1)]  # fmt: skip


class TestConformanceCatchesBadAgents(unittest.TestCase):
    """The mixin must be able to fail: an agent that accepts anything is caught."""

    def test_lenient_agent_fails(self):
        from mamab.agents.baselines import FullCommunicationAgent

        class Lenient(FullCommunicationAgent):
            def receive(self, message):
                try:
                    super().receive(message)
                except Exception:
                    self.ucb.samples += 1  # mutates state on refusal, then swallows it

        class Check(AgentConformance):
            def make_agents(self, topology, n_arms, horizon):
                return [
                    Lenient(i, n_arms, horizon, topology.neighbours[i])
                    for i in range(topology.n_agents)
                ]

        with self.assertRaises(AssertionError):
            Check().test_refused_messages_change_nothing()

    def test_agent_taking_messages_from_the_future_fails(self):
        import dataclasses

        from mamab.agents.base import Message
        from mamab.agents.baselines import FullCommunicationAgent

        class Clockless(FullCommunicationAgent):
            def _check_envelope(self, message):
                if isinstance(message, Message):
                    message = dataclasses.replace(message, stamp=0)  # never looks at the stamp
                super()._check_envelope(message)

        class Check(AgentConformance):
            def make_agents(self, topology, n_arms, horizon):
                return [
                    Clockless(i, n_arms, horizon, topology.neighbours[i])
                    for i in range(topology.n_agents)
                ]

        with self.assertRaises(AssertionError):
            Check().test_refused_messages_change_nothing()
