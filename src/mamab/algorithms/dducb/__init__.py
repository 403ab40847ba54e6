"""DDUCB's spec (Martínez-Rubio et al. 2019): accelerated gossip of sums and counts.

agent.py: the online agents; kernel.py: the numba kernel; driver.py: its fast driver; spec.py:
the AlgorithmSpec of each algorithm of the family."""
