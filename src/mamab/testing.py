"""A reusable conformance test for online agents (in the spirit of dm_env's test mixin).

Subclass :class:`AgentConformance` together with ``unittest.TestCase`` (pytest collects it) and
implement :meth:`make_agents`. The mixin drives the agents on small graphs and checks the
protocol a host relies on: arms in range, messages only to neighbours, correctly addressed and
stamped with the sender's clock, determinism, and that every refusal raises and changes nothing
(the pickled state is compared):

- ``receive()`` raises :class:`InvalidMessage` for a malformed, misaddressed or junk message (a
  numpy array, list, dict or string where a scalar or tuple is expected, at any depth of the
  payload or in the header), one from a stranger or from the future, and a second copy of a
  message within one exchange, on time or delayed;
- ``observe()`` raises :class:`InvalidObservation` (see ``observation_errors``) for an arm other
  than the one ``select_arm()`` just returned, a second ``observe()`` without a new selection,
  and a reward that is not a finite real number;
- numpy integers and floats are taken like Python's (same trajectory), and messages delivered
  one exchange late are taken without error.

:func:`assert_engines_agree` holds an algorithm's fast kernel to its online agents: the same
configuration on both engines must give identical regret, bits, counters and arms played.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from mamab import topology as topo
from mamab.algorithms.base import Agent, Message
from mamab.errors import InvalidMessage, InvalidObservation

Trace = list[tuple[int, ...]]
Deliver = Callable[[Agent, Message], None]
Observe = Callable[[Agent, int, float], None]


def _receive(agent: Agent, message: Message) -> None:
    agent.receive(message)


def _named(what: Any) -> str:
    return what() if callable(what) else str(what)


def _observe(agent: Agent, arm: int, reward: float) -> None:
    agent.observe(arm, reward)


def sometimes(
    probe: Callable[..., None], plain: Callable[..., None], first: int = 150, every: int = 40
) -> Callable[..., None]:
    """A ``deliver`` or ``observe`` hook: ``probe`` on the first ``first`` calls and every
    ``every``-th after, ``plain`` on the others.

    Keeps the costly probes quick for algorithms that talk every step (most others talk rarely
    enough that every message is probed).
    """
    count = itertools.count()

    def hook(agent: Agent, *args: Any) -> None:
        n = next(count)
        (probe if n < first or n % every == 0 else plain)(agent, *args)

    return hook


def as_numpy(value: Any) -> Any:
    """``value`` with every Python int and float (inside tuples too) made a numpy scalar."""
    if isinstance(value, tuple):
        return tuple(as_numpy(v) for v in value)
    if type(value) is int:
        return np.int64(value)
    if type(value) is float:
        return np.float64(value)
    return value


def _array(value: Any) -> np.ndarray:
    """``[value]`` as a numpy array (of objects if numpy cannot make a regular one)."""
    try:
        return np.array([value])
    except ValueError:
        out = np.empty(1, dtype=object)
        out[0] = value
        return out


def junk_variants(value: Any) -> list[Any]:
    """Values of the wrong shape or type standing in for ``value`` (a scalar, array or tuple)."""
    out = [_array(value), [value], {}, None, "x", float("nan")]
    if not isinstance(value, np.ndarray | tuple):
        out.append(np.array(value))  # a 0-d array is not a scalar
    return out


def with_junk_field(value: tuple) -> list[tuple]:
    """``value`` with one of its fields replaced by junk, in every way."""
    return [
        (*value[:i], junk, *value[i + 1 :])
        for i, field in enumerate(value)
        for junk in junk_variants(field)
    ]


def junk_payloads(payload: Any) -> list[Any]:
    """Junk built from a valid payload: wrapped whole, or one field (at depth <= 2) replaced."""
    out: list[Any] = [np.array(["pull"]), np.array([1]), [1], {}, set(), {"arm": 1}, 2**70, b"1"]
    out += [(payload,), _array(payload)]
    if isinstance(payload, tuple):
        out += [list(payload), *with_junk_field(payload)]
        for i, field in enumerate(payload):
            if isinstance(field, tuple):
                out += [
                    (*payload[:i], inner, *payload[i + 1 :]) for inner in with_junk_field(field)
                ]
    return out


class AgentConformance:
    """Mixin: ``make_agents(topology, n_arms, horizon)`` must return one fresh agent per node."""

    n_arms = 12
    horizon = 400
    observation_errors: tuple[type[Exception], ...] = (InvalidObservation, InvalidMessage)

    def make_agents(self, topology: topo.Topology, n_arms: int, horizon: int) -> list[Agent]:
        raise NotImplementedError

    def malformed_payloads(self, message: Message, n_arms: int) -> list[Any]:
        """Payloads the agent must refuse; override for algorithms with structured payloads."""
        return ["junk", None, -1, n_arms, 1.5, True]

    def junk_payloads(self, message: Message) -> list[Any]:
        """Payloads of the wrong shape or type, built from a valid one; override for an algorithm
        whose payloads are not numbers, strings, tuples and numpy arrays."""
        return junk_payloads(message.payload)

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
        deliver: Deliver = _receive,
        observe: Observe = _observe,
    ) -> Trace:
        """Play ``horizon`` steps; with ``late``, every message arrives one exchange late.

        ``deliver`` hands a message to its receiver and ``observe`` a reward to its agent (both
        may probe refusals first); ``probe`` also tries refused messages before each delivery.
        """
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
                observe(agent, int(arm), float(rewards.random() < (arm + 1) / (self.n_arms + 1)))
                arms.append(int(arm))
            trace.append(tuple(arms))
            for message in held:
                deliver(agents[message.receiver], message)
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
                    deliver(agents[message.receiver], message)
                    trace.append(("msg", message.sender, message.receiver, message.bits))
        return trace

    def _fresh_drive(self, graph: topo.Topology, seed: int, **kwargs: Any) -> Trace:
        return self._drive(
            self.make_agents(graph, self.n_arms, self.horizon), graph, seed, **kwargs
        )

    def _check_sent(self, message: Message, graph: topo.Topology, step: int) -> None:
        assert isinstance(message, Message)
        assert graph.are_neighbours(message.sender, message.receiver), (
            f"agent {message.sender} messaged non-neighbour {message.receiver}"
        )
        assert isinstance(message.bits, int) and message.bits > 0
        assert message.stamp == step, f"message stamped {message.stamp}, sent after step {step}"

    @staticmethod
    def _expect_refusal(
        agent: Agent, call: Callable[[], None], what: Any, errors: tuple[type[Exception], ...]
    ) -> None:
        """``call()`` must raise one of ``errors`` and leave ``agent`` exactly as it was.

        ``what`` names the refused input in a failure message (a callable is asked only then:
        the repr of a message holding arrays is costly).
        """
        before = pickle.dumps(agent.__dict__)
        try:
            call()
        except errors:
            pass
        except Exception as error:
            raise AssertionError(
                f"agent {agent.agent_id} raised {type(error).__name__} ({error}) for "
                f"{_named(what)}, not {' or '.join(e.__name__ for e in errors)}"
            ) from error
        else:
            raise AssertionError(f"agent {agent.agent_id} accepted {_named(what)}")
        assert pickle.dumps(agent.__dict__) == before, (
            f"refusing {_named(what)} changed the agent's state"
        )

    def _refuse_message(self, receiver: Agent, wrong: Any) -> None:
        self._expect_refusal(
            receiver,
            lambda: receiver.receive(wrong),
            lambda: f"message {wrong!r}",
            (InvalidMessage,),
        )

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
            self._refuse_message(receiver, wrong)

    def _junk_then_receive(self, receiver: Agent, message: Message) -> None:
        """Every junk payload and junk header field is refused; then the real message is taken."""
        bad = [dataclasses.replace(message, payload=p) for p in self.junk_payloads(message)]
        for name in ("sender", "receiver", "stamp", "bits"):
            value = getattr(message, name)
            bad += [
                dataclasses.replace(message, **{name: junk})
                for junk in (*junk_variants(value), float(value), True, [value])
            ]
        for wrong in bad:
            self._refuse_message(receiver, wrong)
        receiver.receive(message)

    def _receive_twice(self, receiver: Agent, message: Message) -> None:
        receiver.receive(message)
        self._refuse_message(receiver, message)  # the same message again, in the same exchange

    @staticmethod
    def _receive_numpy(receiver: Agent, message: Message) -> None:
        numpy = Message(*(as_numpy(getattr(message, f.name)) for f in dataclasses.fields(Message)))
        try:
            receiver.receive(numpy)
        except InvalidMessage as error:
            raise AssertionError(
                f"agent {receiver.agent_id} refused numpy scalars: {error}"
            ) from error

    def _observe_probed(self, agent: Agent, arm: int, reward: float) -> None:
        """Wrong observations are refused; the right one (numpy scalars) is taken; not twice."""
        errors = self.observation_errors
        k = self.n_arms
        arms = [
            (arm + 1) % k,
            -1,
            k,
            arm - k,
            float(arm),
            np.float64(arm),
            np.array([arm]),
            [arm],
            str(arm),
            None,
            {},
        ]
        rewards = [
            float("nan"),
            float("inf"),
            -float("inf"),
            "1",
            None,
            np.array([reward]),
            [reward],
            {},
            1j,
            10**400,
        ]
        for bad in arms:
            self._expect_refusal(
                agent, lambda b=bad: agent.observe(b, reward), f"arm {bad!r}", errors
            )
        for bad in rewards:
            self._expect_refusal(
                agent, lambda b=bad: agent.observe(arm, b), f"reward {bad!r}", errors
            )
        agent.observe(np.int64(arm), np.float64(reward))
        self._expect_refusal(
            agent,
            lambda: agent.observe(arm, reward),
            "a second observe() without select_arm()",
            errors,
        )

    # -- the checks --

    def test_arms_in_range_and_messages_along_edges(self) -> None:
        for graph in self.graphs():
            self._fresh_drive(graph, seed=1)

    def test_deterministic(self) -> None:
        for graph in self.graphs():
            assert self._fresh_drive(graph, seed=7) == self._fresh_drive(graph, seed=7)

    def test_refused_messages_change_nothing(self) -> None:
        for graph in self.graphs():
            clean = self._fresh_drive(graph, seed=3)
            probed = self._fresh_drive(graph, seed=3, probe=True)
            assert clean == probed, "probing with refused messages changed the trajectory"

    def test_junk_messages_are_refused(self) -> None:
        for graph in self.graphs()[:2]:
            for late in (False, True):
                clean = self._fresh_drive(graph, seed=4, late=late)
                probed = self._fresh_drive(
                    graph, seed=4, late=late, deliver=sometimes(self._junk_then_receive, _receive)
                )
                assert clean == probed, "probing with junk messages changed the trajectory"

    def test_duplicates_in_one_exchange_are_refused(self) -> None:
        for graph in self.graphs():
            for late in (False, True):
                clean = self._fresh_drive(graph, seed=6, late=late)
                twice = self._fresh_drive(graph, seed=6, late=late, deliver=self._receive_twice)
                assert clean == twice, "a refused second copy changed the trajectory"

    def test_numpy_scalars_are_taken(self) -> None:
        for graph in self.graphs():
            clean = self._fresh_drive(graph, seed=8)
            numpy = self._fresh_drive(graph, seed=8, deliver=self._receive_numpy)
            assert clean == numpy, "numpy integers and floats gave another trajectory"

    def test_observe_refuses_what_was_not_selected_or_not_finite(self) -> None:
        for graph in self.graphs()[:2]:
            clean = self._fresh_drive(graph, seed=9)
            probed = self._fresh_drive(
                graph, seed=9, observe=sometimes(self._observe_probed, _observe)
            )
            assert clean == probed, "refused observations changed the trajectory"

    def test_observe_without_select_is_refused(self) -> None:
        graph = self.graphs()[0]
        for agent in self.make_agents(graph, self.n_arms, self.horizon):
            if agent.plays:
                self._expect_refusal(
                    agent,
                    lambda a=agent: a.observe(0, 0.5),
                    "observe() before select_arm()",
                    self.observation_errors,
                )

    def test_late_messages_are_taken(self) -> None:
        for graph in self.graphs():
            self._fresh_drive(graph, seed=11, late=True)

    def test_copy_is_independent(self) -> None:
        graph = self.graphs()[0]
        agents = self.make_agents(graph, self.n_arms, self.horizon)
        twin = copy.deepcopy(agents)
        assert self._drive(agents, graph, seed=5) == self._drive(twin, graph, seed=5)


def assert_engines_agree(config: Any) -> None:
    """Raise ``AssertionError`` unless ``config`` gives identical results on both engines.

    Regret and bits on the grid, every counter, the arms every agent played at every step and
    the agents that crashed or lied must be equal (not close): the fast kernel and the online
    agents consume the same noise table. ``config`` is a :class:`mamab.Config` whose algorithm
    has a fast engine (else both runs are the reference engine and the check says so).
    """
    import warnings

    from mamab.simulate import simulate

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ReferenceEngineWarning: there is no fast engine
        fast = simulate(config, engine="fast", trace=True, jobs=1)
    reference = simulate(config, engine="reference", trace=True)
    what = f"{config.algorithm} (seed {config.seed})"
    for name in ("regret", "bits", "arms", "crash", "malicious"):
        a, b = getattr(fast, name), getattr(reference, name)
        if a is None and b is None:
            continue
        if a is None or b is None or not np.array_equal(a, b):
            raise AssertionError(f"{what}: the engines differ in {name}")
    for name, values in fast.counts.items():
        if not np.array_equal(values, reference.counts[name]):
            raise AssertionError(f"{what}: the engines differ in the counter {name}")
