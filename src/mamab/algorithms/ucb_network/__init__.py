"""UCB-Network's spec (FYL, Kolla et al. 2018): leaders of a dominating set play UCB.

agent.py: the online agents; kernel.py: the numba kernel; driver.py: its fast driver; spec.py:
the AlgorithmSpec of each algorithm of the family."""
