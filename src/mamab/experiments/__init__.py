"""Experiments as data: sweep specifications, paper presets, the resumable runner and reports."""

from mamab.experiments.spec import Experiment, SweepSpec, load_preset, load_spec

__all__ = ["Experiment", "SweepSpec", "load_preset", "load_spec"]
