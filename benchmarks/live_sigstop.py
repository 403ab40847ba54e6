"""A live node stopped (SIGSTOP) mid-run and continued: who is reported silent, when, how long.

Starts `mamab live` (4 nodes, full communication, sync, --timeout 3), holds node 2 after step
2000 (MAMAB_LIVE_HOLD: a state, not a time), stops it with SIGSTOP as it goes on, continues it
after STOP seconds, and prints the summary's silences, stopped nodes, refused connections and
messages received (docs/live.md). Run: PYTHONPATH=src python benchmarks/live_sigstop.py 8
Every process it started is killed by its id at the end, however it ends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def main(stop_seconds: float) -> None:
    out = Path(tempfile.mkdtemp(prefix="live-sigstop-"))
    held = out / "held"
    command = [
        sys.executable,
        "-m",
        "mamab",
        "live",
        "--algorithm",
        "full-communication",
        "-N",
        "4",
        "-K",
        "10",
        "-T",
        "6000",
        "--runs",
        "1",
        "--sync",
        "--timeout",
        "3",
        "--out",
        str(out / "results"),
    ]
    proc = subprocess.Popen(
        command,
        env={**os.environ, "MAMAB_LIVE_HOLD": f"2:2000:{held}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not held.exists():
            if proc.poll() is not None:
                raise SystemExit(f"mamab live ended first: {proc.communicate()[1]}")
            time.sleep(0.01)
        node = int(held.read_text())
        os.kill(node, signal.SIGSTOP)
        held.unlink()  # released, but stopped: it goes on when continued
        time.sleep(stop_seconds)
        os.kill(node, signal.SIGCONT)
        stdout, _ = proc.communicate(timeout=900)
        print(stdout)
        run = json.loads((out / "results" / "summary.json").read_text())["per_run"][0]
        for key in ("silences", "stopped", "refused_per_node", "messages_received_per_agent"):
            print(key, json.dumps(run[key]))
    finally:
        if proc.poll() is None:
            for child in children(proc.pid):
                os.kill(child, signal.SIGKILL)
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 8.0)
