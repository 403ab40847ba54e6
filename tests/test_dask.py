"""Sweeps on a real Dask cluster on 127.0.0.1: same bytes as locally, survives a dead worker.

The scheduler and workers are separate processes on random free ports, always stopped, also
when a test fails.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from mamab.cli import main
from mamab.experiments import load_spec
from mamab.experiments.dask_executor import DaskExecutor
from mamab.experiments.runner import run_sweep

SPEC = """
name = "dasky"
seed = 11
runs = 8
runs_per_task = 1
grid_points = 30

[[experiments]]
name = "complete"
algorithms = ["lcc-ucb", "gosine", "no-communication"]
agents = 4
arms = 24
horizon = 200000
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                ":0",
            ],
            **quiet,
        )
    ]
    try:
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        address,
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--host",
                        "127.0.0.1",
                        "--dashboard-address",
                        ":0",
                    ],
                    **quiet,
                )
            )
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address, procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "dasky.toml"
    path.write_text(SPEC)
    return path


def test_dask_gives_the_local_bytes(cluster, spec_file, tmp_path):
    address, _ = cluster
    spec = load_spec(spec_file)
    local = run_sweep(spec, tmp_path / "local", jobs=1, progress=False)
    remote = run_sweep(
        spec, tmp_path / "dask", executor=DaskExecutor(scheduler=address), progress=False
    )
    assert remote.tasks_run == local.tasks_run == 24
    assert (tmp_path / "dask" / "summary.csv").read_bytes() == (
        tmp_path / "local" / "summary.csv"
    ).read_bytes()
    # resuming on Dask skips what is done, as locally
    again = run_sweep(
        spec, tmp_path / "dask", executor=DaskExecutor(scheduler=address), progress=False
    )
    assert again.tasks_run == 0


def test_shared_directory_and_cli(cluster, spec_file, tmp_path, capsys):
    address, _ = cluster
    out = tmp_path / "shared"
    with pytest.raises(SystemExit) as done:
        main(
            [
                "sweep",
                str(spec_file),
                "--out",
                str(out),
                "--executor",
                "dask",
                "--scheduler",
                address,
                "--shared",
            ]
        )
    assert done.value.code == 0, capsys.readouterr().err
    run_sweep(load_spec(spec_file), tmp_path / "local", jobs=2, progress=False)
    assert (out / "summary.csv").read_bytes() == (tmp_path / "local" / "summary.csv").read_bytes()


def test_a_dead_worker_loses_nothing(cluster, spec_file, tmp_path):
    address, procs = cluster
    out = tmp_path / "faulty"
    outcome = {}

    def sweep():
        outcome["result"] = run_sweep(
            load_spec(spec_file), out, executor=DaskExecutor(scheduler=address), progress=False
        )

    thread = threading.Thread(target=sweep)
    thread.start()
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "tasks").glob("*.npz"))) < 3:
        time.sleep(0.05)
    done_at_kill = len(list((out / "tasks").glob("*.npz")))
    victim = procs[1]
    victim.send_signal(signal.SIGKILL)
    assert done_at_kill < 24, "the worker died after the sweep had finished: nothing was tested"
    thread.join(timeout=300)
    assert not thread.is_alive(), "the sweep did not finish after a worker died"
    assert outcome["result"].tasks_run == 24
    run_sweep(load_spec(spec_file), tmp_path / "local", jobs=2, progress=False)
    assert (out / "summary.csv").read_bytes() == (tmp_path / "local" / "summary.csv").read_bytes()


def test_unreachable_scheduler_is_a_one_line_error(spec_file, tmp_path):
    port = free_port()  # nothing listens here
    start = time.time()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mamab",
            "sweep",
            str(spec_file),
            "--out",
            str(tmp_path / "x"),
            "--executor",
            "dask",
            "--scheduler",
            f"tcp://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"tcp://127.0.0.1:{port}" in proc.stderr and "Traceback" not in proc.stderr
    assert time.time() - start < 20
