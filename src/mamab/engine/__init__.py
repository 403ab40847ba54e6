"""Simulation engines: the readable reference (online agents) and the fast numba kernels."""
