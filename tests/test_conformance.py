"""Every online agent passes the reusable conformance mixin."""

import contextlib
import unittest

import networkx as nx
import numpy as np

from mamab import topology as topo
from mamab.agents import AlgorithmParams, make_agents
from mamab.algorithms.lcc.agent import LccUcbAgent
from mamab.algorithms.ucb.agent import FullCommunicationAgent, NoCommunicationAgent
from mamab.errors import InvalidMessage, InvalidObservation
from mamab.schedule import initial_block
from mamab.testing import AgentConformance


class _ByName(AgentConformance):
    algorithm = ""

    def make_agents(self, topology, n_arms, horizon):
        return make_agents(self.algorithm, topology, n_arms, horizon, AlgorithmParams(k_prime=2))


class TestLccUcb(_ByName, unittest.TestCase):
    algorithm = "lcc-ucb"


class TestLccUcbGraph(_ByName, unittest.TestCase):
    algorithm = "lcc-ucb-graph"


class TestLccUcbRobust(_ByName, unittest.TestCase):
    algorithm = "lcc-ucb-robust"


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


class TestGosineRobust(TestGosine):
    algorithm = "gosine-robust"


class TestCoopUcb2(_ByName, unittest.TestCase):
    algorithm = "coop-ucb2"
    horizon = 150

    def malformed_payloads(self, message, n_arms):
        import numpy as np

        good = np.zeros(n_arms)
        return [
            "junk",
            (good,),
            (good, np.zeros(n_arms + 1)),
            (np.full(n_arms, -1.0), good),
            (np.full(n_arms, np.nan), good),
            (good.astype(np.float32), good),
            ([0.0] * n_arms, good),
        ]


class TestDducb(_ByName, unittest.TestCase):
    algorithm = "dducb"
    horizon = 150

    def malformed_payloads(self, message, n_arms):
        good = np.zeros(n_arms)
        return [
            "junk",
            (good,),
            (good, np.zeros(n_arms + 1)),
            (good, good, good),
            (np.full(n_arms, np.inf), good),
            (good, good.astype(np.float32)),
            ([0.0] * n_arms, good),
        ]


class TestDducbOneArmPerStage(TestDducb):
    def make_agents(self, topology, n_arms, horizon):
        return make_agents(
            "dducb", topology, n_arms, horizon, AlgorithmParams(dducb_index="per-stage")
        )


class TestUcbNetwork(_ByName, unittest.TestCase):
    algorithm = "ucb-network"

    def graphs(self):  # followers with one and with two leader neighbours, an isolated leader
        return [
            *super().graphs(),
            topo.line(5),
            topo.ring(7),
            topo.Topology.from_networkx(nx.empty_graph(2)),
        ]

    def malformed_payloads(self, message, n_arms):
        tag = message.payload[0]
        other = ("arm", 0) if tag == "sample" else ("sample", 0, 0.5)  # the wrong role's kind
        return [
            "junk",
            (0, 0.5),
            ("sample", n_arms, 0.5),
            ("sample", 0, float("nan")),
            ("sample", -1, 0.5),
            ("arm", n_arms),
            ("arm", "1"),
            ("arm",),
            ("pull", 0),
            ("arm", 0, 1.0),
            (tag,),
            other,
        ]


class TestDemab(_ByName, unittest.TestCase):
    algorithm = "demab"
    horizon = 600

    def network(self, graph):
        from mamab.topology import server_star

        return server_star(graph.n_agents)

    def malformed_payloads(self, message, n_arms):
        return [
            "junk",
            (),
            ("best",),
            ("best", n_arms, 0.5),
            ("best", 0, float("nan")),
            ("assign", (n_arms,)),
            ("assign", 3),
            ("count", -1),
            ("count", n_arms + 1),
            ("arms", ("x",)),
            ("report", -1, 0.0),
            ("warp", 1),
        ]


class TestConformanceCatchesBadAgents(unittest.TestCase):
    """The mixin must be able to fail: an agent that accepts anything is caught."""

    def test_lenient_agent_fails(self):
        from mamab.algorithms.ucb.agent import FullCommunicationAgent

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

        from mamab.algorithms.base import Message
        from mamab.algorithms.ucb.agent import FullCommunicationAgent

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


def _check_for(cls, **kwargs):
    """A conformance check of agents of class ``cls`` (one per node, built like the baselines)."""

    class Check(AgentConformance):
        def make_agents(self, topology, n_arms, horizon):
            return [
                cls(i, n_arms, horizon, topology.neighbours[i], **kwargs)
                for i in range(topology.n_agents)
            ]

    return Check()


def _lcc_check_for(cls):
    class Check(AgentConformance):
        def make_agents(self, topology, n_arms, horizon):
            return [
                cls(
                    i,
                    n_arms,
                    horizon,
                    topology.neighbours[i],
                    initial_block(i, n_arms, topology.n_agents),
                    k_prime=2,
                )
                for i in range(topology.n_agents)
            ]

    return Check()


class TestConformanceCatchesBadReceive(unittest.TestCase):
    """Each new message check fails for an agent with exactly that defect."""

    def test_agent_taking_a_second_copy_fails(self):
        class Credulous(FullCommunicationAgent):
            def _check_first_copy(self, message, kind=None):
                return (message.sender, message.stamp, len(self._heard))  # never a repeat

        with self.assertRaisesRegex(AssertionError, "accepted message"):
            _check_for(Credulous).test_duplicates_in_one_exchange_are_refused()

    def test_agent_coercing_arrays_to_arms_fails(self):
        class Coercing(LccUcbAgent):
            def _check_arm(self, arm):
                with contextlib.suppress(TypeError, ValueError, IndexError):
                    arm = int(np.asarray(arm).ravel()[0])  # takes [3] and array([3]) for 3
                return super()._check_arm(arm)

        with self.assertRaisesRegex(AssertionError, "accepted message"):
            _lcc_check_for(Coercing).test_junk_messages_are_refused()

    def test_agent_raising_type_error_on_junk_fails(self):
        class Hashing(LccUcbAgent):
            def receive(self, message):
                {message.payload}  # a TypeError for an unhashable payload  # noqa: B018
                super().receive(message)

        with self.assertRaisesRegex(AssertionError, "raised TypeError"):
            _lcc_check_for(Hashing).test_junk_messages_are_refused()

    def test_agent_refusing_numpy_integers_fails(self):
        class Pedantic(LccUcbAgent):
            def _check_arm(self, arm):
                if type(arm) is not int:
                    raise InvalidMessage("only Python ints")
                return super()._check_arm(arm)

        with self.assertRaisesRegex(AssertionError, "numpy"):
            _lcc_check_for(Pedantic).test_numpy_scalars_are_taken()


class TestConformanceCatchesBadObserve(unittest.TestCase):
    def test_agent_trusting_observe_fails(self):
        class Trusting(NoCommunicationAgent):
            def _accept_observation(self, arm, reward):
                return arm, reward

        for check in (
            "test_observe_refuses_what_was_not_selected_or_not_finite",
            "test_observe_without_select_is_refused",
        ):
            with self.assertRaises(AssertionError):
                getattr(_check_for(Trusting), check)()

    def test_agent_validating_after_a_change_fails(self):
        class Late(NoCommunicationAgent):  # counts the sample before checking it
            def observe(self, arm, reward):
                self.ucb.samples += 1
                arm, reward = self._accept_observation(arm, reward)
                self.ucb.samples -= 1
                self._learn_own(arm, reward)

        with self.assertRaisesRegex(AssertionError, "changed the agent's state"):
            _check_for(Late).test_observe_refuses_what_was_not_selected_or_not_finite()

    def test_agent_taking_any_arm_in_range_fails(self):
        class InRange(NoCommunicationAgent):
            def _observed_arm(self, arm):
                if not 0 <= arm < self.n_arms:
                    raise InvalidObservation("out of range")
                return int(arm)

        with self.assertRaisesRegex(AssertionError, "accepted arm"):
            _check_for(InRange).test_observe_refuses_what_was_not_selected_or_not_finite()
