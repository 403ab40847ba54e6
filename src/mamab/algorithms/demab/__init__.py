"""DEMAB's spec (Wang et al. 2020): elimination with a central server (node N).

agent.py: the online agents; kernel.py: the numba kernel; driver.py: its fast driver; spec.py:
the AlgorithmSpec of each algorithm of the family."""
