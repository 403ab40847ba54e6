"""Recovery after kill -9 + --resume: how long a killed sync node takes to be back in step.

    python benchmarks/live_resume.py [T] [KILL_STEP] [CHECKPOINT_EVERY]

A sync full-communication fleet of 3 `mamab agent` processes over CURVE on loopback (N = 3,
K = 10, seed 0, every node checkpointing). Node 1 holds after step KILL_STEP (MAMAB_LIVE_HOLD),
is killed with SIGKILL there, and is started again with --resume, holding again after step
KILL_STEP + 1. Recovery = from that start until the hold file appears: Python start-up,
connection, hellos, loading the checkpoint, replaying the steps since it (with the frames its
neighbours send again). Checks that every node's result equals `mamab run`'s.
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

from mamab import Config, simulate
from mamab.live.roster import write_fleet
from mamab.live.transport import free_ports


def wait_for(path: Path, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} never appeared")
        time.sleep(0.005)


def main() -> None:
    horizon = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    kill = int(sys.argv[2]) if len(sys.argv) > 2 else horizon // 2
    every = sys.argv[3] if len(sys.argv) > 3 else "2.0"
    flags = [
        "--algorithm",
        "full-communication",
        "-N",
        "3",
        "-K",
        "10",
        "-T",
        str(horizon),
        "--seed",
        "0",
        "--sync",
        "--timeout",
        "120",
        "--checkpoint-every",
        every,
    ]
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        keys = d / "keys"
        write_fleet([f"tcp://127.0.0.1:{p}" for p in free_ports(3)], keys)

        def agent(node: int, hold: str | None, *extra: str) -> subprocess.Popen:
            env = dict(os.environ)
            if hold:
                env["MAMAB_LIVE_HOLD"] = hold
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mamab",
                    "agent",
                    "--roster",
                    str(keys / "roster.toml"),
                    "--id",
                    str(node),
                    "--secret",
                    str(keys / f"agent-{node}.secret"),
                    "--out",
                    str(d / f"{node}.json"),
                    "--checkpoint",
                    str(d / f"{node}.ckpt"),
                    *flags,
                    *extra,
                ],
                env=env,
                stderr=subprocess.PIPE,
                text=True,
            )
            procs.append(proc)
            return proc

        try:
            held = d / "held"
            first = [agent(n, f"1:{kill}:{held}" if n == 1 else None) for n in range(3)]
            wait_for(held)
            os.kill(int(held.read_text()), signal.SIGKILL)
            first[1].wait()
            held.unlink()
            again = d / "again"
            start = time.monotonic()
            resumed = agent(1, f"1:{kill + 1}:{again}", "--resume")
            wait_for(again)
            recovery = time.monotonic() - start
            again.unlink()
            for proc in (first[0], resumed, first[2]):
                _, err = proc.communicate(timeout=600)
                if proc.returncode != 0:
                    raise SystemExit(err)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        records = [json.loads((d / f"{n}.json").read_text()) for n in range(3)]
    sim = simulate(Config("full-communication", 3, 10, horizon, seed=0))
    exact = [r["final_regret"] for r in records] == sim.final_regret[0].tolist()
    r = records[1]
    print(
        f"T = {horizon}, killed after step {kill}, --checkpoint-every {every}: back in step "
        f"{recovery:.2f} s after the --resume start; resent to it: "
        f"{records[0]['resent'] + records[2]['resent']} frames, its replayed frames dropped "
        f"as duplicates: {records[0]['duplicates'] + records[2]['duplicates']}; checkpoints "
        f"of the resumed node: {r['checkpoints']}; equals mamab run: {exact}"
    )


if __name__ == "__main__":
    main()
