"""GosInE's specs (Chawla et al. 2020): gosine, and gosine-robust with blocking (Vial et al. 2021).

agent.py: the online agents; kernel.py: the numba kernel; driver.py: its fast driver; spec.py:
the AlgorithmSpec of each algorithm of the family."""
