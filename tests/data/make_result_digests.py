"""Regenerate tests/data/result_digests.json from the configurations in tests/test_digests.py.

    PYTHONPATH=src python tests/data/make_result_digests.py

Run it on the commit whose results are to be pinned (before a refactor), and again only when a
change of results is intended. It checks that the reference engine gives the fast engine's
digest on the configurations the test runs on both, so a pinned digest is never one side's bug.
Not collected by pytest (its name does not start with ``test_``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for test_digests

import test_digests as pins


def commit() -> str:
    """The commit these digests were computed on (and whether the tree had local changes)."""
    root = Path(__file__).resolve().parents[2]
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return head + (" (src modified)" if dirty else "")


def main() -> None:
    start = time.perf_counter()
    results = {}
    for name in sorted(pins.CONFIGS):
        found = pins.run_digests(name)
        if name in pins.REFERENCE:
            ref = pins.run_digests(name, engine="reference")
            if ref != found:
                sys.exit(f"{name}: the reference engine disagrees with the fast one; not pinning")
        results[name] = {"config": pins.CONFIGS[name].to_dict(), "digests": found}
    presets = {}
    for preset in pins.PRESETS:
        ids = pins.task_ids(preset)
        presets[preset] = {"count": len(ids), "sha256": pins.list_digest(ids), "task_ids": ids}
    data = {"commit": commit(), "results": results, "presets": presets}
    tmp = pins.DATA.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(pins.DATA)
    print(
        f"pinned {len(results)} configurations and {len(presets)} presets in {pins.DATA} "
        f"({time.perf_counter() - start:.0f} s)"
    )


if __name__ == "__main__":
    main()
