"""Fixtures shared by the test modules."""

from __future__ import annotations

import pytest

import mamab
from mamab.algorithms import registry


@pytest.fixture
def plugins():
    """Register test plugins; forget them (and the fallback notes) afterwards."""
    added: list[str] = []

    def add(name, make, **metadata):
        info = mamab.register_algorithm(name, make, **metadata)
        added.append(name)
        return info

    registry._announced.clear()
    yield add
    for name in added:
        registry.unregister_algorithm(name)
    registry._announced.clear()
