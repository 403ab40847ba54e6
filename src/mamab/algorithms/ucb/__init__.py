"""The UCB baselines: no-communication and full-communication.

agent.py: the online agents; spec.py: their AlgorithmSpecs. Their fast engine is the LCC family's
kernel and driver in its UCB modes (``mamab.algorithms.lcc.variants``).
"""
