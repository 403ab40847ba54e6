"""The algorithms: the spec registry and one folder per family of algorithms.

Each family folder (``lcc``, ``ucb``, ``demab``, ``gosine``, ``coop``, ``dducb``,
``ucb_network``) holds its online agents (``agent.py``), its schedule, its numba kernel
(``kernel.py``), the kernel's driver and ``spec.py``, the :class:`AlgorithmSpec` of each of its
algorithms. The registry (:mod:`mamab.algorithms.registry`) knows no algorithm: it reads the
families' ``SPECS`` and whatever plugins register. Importing this package imports nothing heavy.
"""
