"""coop-UCB2's spec (Landgren et al.): running consensus of counts and sums.

agent.py: the online agents; kernel.py: the numba kernel; driver.py: its fast driver; spec.py:
the AlgorithmSpec of each algorithm of the family."""
