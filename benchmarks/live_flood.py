"""Memory and delivery cost of a live node flooded by one neighbour (docs/live.md, issue 21).

One neighbour puts 200 000 legal-looking frames for distinct future rounds in node 0's inbox;
node 0 takes them, then delivers steps 1..1000. Prints the frames held, the memory they keep
(tracemalloc, which slows everything: compare the two figures, not with other timings) and the
delivery cost per step. Run: PYTHONPATH=src python benchmarks/live_flood.py
"""

from __future__ import annotations

import gc
import queue
import time
import tracemalloc

from mamab import Config
from mamab.live import link
from mamab.live.agreement import digest
from mamab.live.memory import MemoryNetwork
from mamab.live.node import LiveNode
from mamab.live.play import fleet, wire_spec
from mamab.wire import Frame, encode_frame

FRAMES = 200_000


def main() -> None:
    config = Config("full-communication", 4, 10, 100_000, seed=0, graph="complete")
    _, agents, _ = fleet(config, 0)
    spec = wire_spec(config)
    network = MemoryNetwork(4)
    node = LiveNode(agents[0], network.transport(0), spec)
    span = config.horizon - 1
    session = link.new_session(1)  # the flooder's: its hello first, then numbered frames
    hello = link.Control(3, 0, 0, False, digest(node.record), node.record)
    frames = [link.encode_control(link.HELLO, session, 0, hello)] + [
        link.encode(
            link.DATA,
            session,
            i + 1,
            0,
            encode_frame(Frame(3, 0, 1 + i % span, i // span, ()), spec),
        )
        for i in range(FRAMES)
    ]
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for data in frames:
        network.inboxes[0].put((3, data))
    node._take_arrived()
    network.inboxes[0] = queue.Queue()  # what the transport's queue held is not the node's
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - base
    start = time.perf_counter()
    for step in range(1, 1001):
        node._deliver_due(step)
    per_step = (time.perf_counter() - start) / 1000
    print(
        f"{FRAMES} frames from one neighbour: {len(node._pending)} held after step 1000, "
        f"{kept / 1e6:.1f} MB kept, {getattr(node.counts, 'over_window', 'n/a')} dropped; "
        f"delivery {per_step * 1e6:.0f} us per step"
    )


if __name__ == "__main__":
    main()
