"""The UCB baselines: no-communication and full-communication.

agent.py: the online agents; spec.py: their AlgorithmSpecs; kernel.py and driver.py: their fast
engine (UCB1 on all K arms with an exact lazy argmax, ``mamab.engine.ucb_kernels``' grouped
bounds).
"""
