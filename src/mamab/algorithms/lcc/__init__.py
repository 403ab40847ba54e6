"""The LCC-UCB family's specs: lcc-ucb, lcc-ucb-graph, lcc-ucb-relay and lcc-ucb-robust.

agent.py: the online agents; kernel.py: the numba kernel; driver.py: its fast driver; spec.py:
the AlgorithmSpec of each algorithm of the family."""
