"""``mamab live``: a whole live run on this machine, one process per node over loopback."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from mamab.algorithms.registry import central_server, require_wire
from mamab.attacks import draw_liars
from mamab.cli_params import param_texts
from mamab.cli_types import malicious_flag
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.live.play import wire_spec
from mamab.live.roster import write_fleet
from mamab.live.transport import free_ports
from mamab.options import problem_config
from mamab.storage import write_json

#: Prefix of the private temporary directories holding a live run's roster and secret keys.
TMP_PREFIX = "mamab-live-"
#: The file in such a directory naming the process that owns it ("<pid> <start time>").
OWNER = "owner"
#: Where ``mamab live --out DIR`` writes each run as it ends: DIR/RUNS/run-<run>.json.
RUNS = "runs"


def node_count(config: Config) -> int:
    """Agents, plus DEMAB's server."""
    return config.agents + (1 if central_server(config.algorithm) else 0)


def problem_flags(config: Config, sync: bool) -> list[str]:
    """The flags that make a node's run (the problem flags of ``config`` and the mode)."""
    flags = [
        "--algorithm",
        config.algorithm,
        "-N",
        str(config.agents),
        "-K",
        str(config.arms),
        "-T",
        str(config.horizon),
        "--seed",
        str(config.seed),
        "--graph",
        config.graph,
        "--reward",
        config.reward,
        "--sigma",
        repr(config.sigma),
    ]
    if config.edge_prob is not None:
        flags += ["--edge-prob", repr(config.edge_prob)]
    if config.params.alpha is not None:
        flags += ["--alpha", repr(config.params.alpha)]
    if config.malicious:
        flags += ["--malicious", malicious_flag(config.malicious), "--attack", config.attack]
    for text in param_texts(config.params):  # none when the run sets none: same flags as before
        flags += ["--param", text]
    return [*flags, "--sync" if sync else "--async"]


def agent_command(
    config: Config,
    run: int,
    roster: Path,
    node: int,
    secret: Path,
    out: Path,
    sync: bool,
    timeout: float,
) -> list[str]:
    """The ``mamab agent`` command line of one node (the problem flags of ``config``)."""
    return [
        sys.executable,
        "-m",
        "mamab",
        "agent",
        "--roster",
        str(roster),
        "--id",
        str(node),
        "--secret",
        str(secret),
        "--run",
        str(run),
        "--timeout",
        repr(timeout),
        "--out",
        str(out),
        *problem_flags(config, sync),
    ]


# -- the private directory of a run's keys ------------------------------------------------------


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, /proc), None if unknown or gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner_alive(owner: str) -> bool:
    """True unless the process an OWNER file names is gone (or its pid was reused since)."""
    pid_text, _, started = owner.strip().partition(" ")
    pid = int(pid_text)
    now = _started(pid)
    if now is not None:
        return not started or now == started
    try:
        os.kill(pid, 0)  # no /proc (another OS): ask the kernel whether the pid exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(root: Path | None = None) -> list[Path]:
    """Remove the private key directories of ``mamab live`` processes that died without
    cleaning up (SIGKILL): this user's ``mamab-live-*`` directories whose owner is gone."""
    removed = []
    for directory in Path(root or tempfile.gettempdir()).glob(f"{TMP_PREFIX}*"):
        try:
            if directory.is_symlink() or directory.stat().st_uid != os.getuid():
                continue
            if _owner_alive((directory / OWNER).read_text()):
                continue
        except (OSError, ValueError):
            continue  # no owner yet (being made), or not ours to judge
        shutil.rmtree(directory, ignore_errors=True)
        removed.append(directory)
    return removed


@contextlib.contextmanager
def private_directory() -> Iterator[Path]:
    """A private temporary directory for a run's keys, owned by this process, removed on exit
    (and by the next ``mamab live`` if this process is killed with SIGKILL)."""
    remove_orphans()
    with tempfile.TemporaryDirectory(prefix=TMP_PREFIX) as tmp:
        (Path(tmp) / OWNER).write_text(f"{os.getpid()} {_started(os.getpid()) or ''}\n")
        yield Path(tmp)


def run_fleet(
    config: Config, run: int, *, sync: bool, timeout: float, directory: Path | None = None
) -> list[dict | None]:
    """Start every node of run ``run`` as a process on free loopback ports; their records.

    A node that dies (killed, crashed) has no record (None); the others finish without it.
    Keys, logs and records go to ``directory`` (default: a private temporary directory, removed
    afterwards). Every process started is stopped, by its id, whatever happens here.
    """
    if directory is None:
        with private_directory() as tmp:
            return run_fleet(config, run, sync=sync, timeout=timeout, directory=tmp)
    m = node_count(config)
    roster = write_fleet([f"tcp://127.0.0.1:{port}" for port in free_ports(m)], directory)
    procs: list[subprocess.Popen] = []
    try:
        for node in range(m):
            with open(directory / f"agent-{node}.log", "wb") as log:
                procs.append(
                    subprocess.Popen(
                        agent_command(
                            config,
                            run,
                            roster,
                            node,
                            directory / f"agent-{node}.secret",
                            directory / f"agent-{node}.json",
                            sync,
                            timeout,
                        ),
                        stdout=subprocess.DEVNULL,
                        stderr=log,
                        stdin=subprocess.DEVNULL,
                        env={**os.environ, "MAMAB_PARENT_PID": str(os.getpid())},
                    )
                )
        for proc in procs:
            proc.wait()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
    records: list[dict | None] = []
    for node, proc in enumerate(procs):
        path = directory / f"agent-{node}.json"
        if proc.returncode == 0 and path.is_file():
            records.append(json.loads(path.read_text()))
        elif proc.returncode == 2:  # an input error: the node said why in one line
            lines = (directory / f"agent-{node}.log").read_text().strip().splitlines()
            raise ConfigError(
                lines[-1].removeprefix("mamab: error: ")
                if lines
                else f"node {node} refused its input"
            )
        else:
            records.append(None)
    return records


def silence_report(records: list[dict | None]) -> list[dict]:
    """Each time a node stopped answering, as its neighbours saw it: the node, who noticed, the
    step they noticed it at, the latest step at which they waited for it again (None:
    not before they finished) and the longest any of them went without it (s). One entry per
    (node, step noticed, whether it came back)."""
    seen: dict[tuple[int, int, bool], dict] = {}
    for observer, record in enumerate(records):
        for s in (record or {}).get("silences", []):
            back = s["back_at_step"]
            entry = seen.setdefault(
                (s["node"], s["from_step"], back is None),
                {
                    "node": s["node"],
                    "noticed_by": [],
                    "from_step": s["from_step"],
                    "back_at_step": back,
                    "seconds": 0.0,
                },
            )
            entry["noticed_by"].append(observer)
            entry["seconds"] = max(entry["seconds"], s["seconds"])
            if back is not None:
                entry["back_at_step"] = max(entry["back_at_step"], back)
    return sorted(seen.values(), key=lambda e: (e["from_step"], e["node"]))


def live_summary(config: Config, runs: list[list[dict | None]], sync: bool) -> dict:
    """``summary.json`` of a live run: the schema of ``mamab run``'s, plus the network's numbers.

    Nodes that did not finish have null entries; ``final_regret_mean`` averages the honest
    agents that finished, ``malicious_agents`` lists the liars (when there are), ``stopped``
    says which did not finish and when their neighbours noticed, and ``silences`` every time a
    node stopped answering (who noticed, from which step, back at which step, for how long).
    """
    per_run = []
    for run, records in zip(config.run_ids, runs, strict=True):
        agents = records[: config.agents]

        def column(key: str, rows: list[dict | None] = agents) -> list:
            return [None if r is None else r[key] for r in rows]

        liar = draw_liars(config.seed, run, config.agents, config.malicious)[0]
        liars = np.flatnonzero(liar).tolist()  # the run's draw: also for nodes that died
        finished = [
            r["final_regret"]
            for r, is_liar in zip(agents, liar, strict=True)
            if r is not None and not is_liar
        ]
        noticed: dict[int, int] = {}
        for record in records:
            for peer, step in (record or {}).get("silent", {}).items():
                noticed[int(peer)] = min(step, noticed.get(int(peer), step))
        silences = silence_report(records)
        stopped = [i for i, r in enumerate(records) if r is None]  # did not finish its run
        per_run.append(
            {
                "run": run,
                "final_regret_per_agent": column("final_regret"),
                "final_regret_mean": float(np.mean(finished)) if finished else None,
                **({"malicious_agents": liars} if liars else {}),
                "messages_sent_per_agent": column("messages_sent"),
                "bits_sent_per_agent": column("bits_sent"),
                "messages_received_per_agent": column("messages_received"),
                "bits_received_per_agent": column("bits_received"),
                "wire_bytes_sent_per_agent": column("wire_bytes_sent"),
                "wire_bytes_received_per_agent": column("wire_bytes_received"),
                "refused_per_node": [None if r is None else r["refused"] for r in records],
                "waits_per_agent": column("waits"),
                "seconds_per_agent": column("seconds"),
                "stopped": [{"node": i, "noticed_at_step": noticed.get(i)} for i in stopped],
                "silences": silences,
            }
        )
    return {
        "algorithm": config.algorithm,
        "agents": config.agents,
        "arms": config.arms,
        "horizon": config.horizon,
        "runs": config.runs,
        "seed": config.seed,
        "reward": config.reward,
        "graph": config.graph,
        "mode": "sync" if sync else "async",
        "statistics": _statistics(config, per_run),
        "per_run": per_run,
    }


def _statistics(config: Config, per_run: list[dict]) -> dict:
    """``mamab run``'s statistics of the live runs (a node that stopped answering: unknown)."""
    from mamab.stats import run_statistics

    def counter(key: str) -> np.ndarray:
        return np.array(
            [[np.nan if v is None else v for v in r[key]] for r in per_run], dtype=float
        )

    means = [np.nan if r["final_regret_mean"] is None else r["final_regret_mean"] for r in per_run]
    return run_statistics(
        [r["run"] for r in per_run],
        np.array(means, dtype=float),
        counter("bits_sent_per_agent"),
        counter("messages_sent_per_agent"),
    )


def _finished_runs(config: Config, sync: bool, out: Path) -> dict[int, list[dict | None]]:
    """The runs of ``config`` already written in ``out`` (each run's file, as it ended).

    A run file of another configuration is refused (ConfigError): its results must not be mixed.
    """
    flags = problem_flags(config, sync)
    done = {}
    for run in config.run_ids:
        path = out / RUNS / f"run-{run}.json"
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text())
            same, records = data["flags"] == flags, data["records"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ConfigError(f"{path} is not a live run's file; use another --out") from None
        if not same:
            raise ConfigError(
                f"{out} holds live runs of another configuration ({path}: "
                f"{' '.join(data['flags'])}); use another --out"
            )
        done[run] = records
    return done


def run_live(
    config: Config, *, sync: bool, timeout: float, progress=None, out: Path | None = None
) -> dict:
    """Every run of ``config`` live, one after the other; the summary.

    With ``out``, each run is written to ``out/runs/run-<run>.json`` as it ends, and a run
    already written there (by an earlier, interrupted call) is not run again.
    """
    wire_spec(config)  # an algorithm the wire format does not know is refused before any start
    require_wire(config.algorithm, sync)  # sync-only algorithms refuse async mode
    flags = problem_config(
        config.algorithm,
        config.agents,
        config.arms,
        config.horizon,
        config.seed,
        config.graph,
        config.edge_prob,
        config.reward,
        config.sigma,
        config.params.alpha,
        runs=config.runs,
        first_run=config.first_run,
        malicious=config.malicious,
        attack=config.attack,
        params=param_texts(config.params),
    )
    if flags != config:
        raise ConfigError(
            "a live run passes its nodes only the problem flags of mamab run (algorithm, N, K, "
            "T, seed, graph file or name, edge probability, reward, sigma, alpha, the parameters "
            "the algorithm reads, malicious, attack); this configuration sets other fields"
        )
    done = _finished_runs(config, sync, out) if out is not None else {}
    remove_orphans()  # keys left by a `mamab live` killed with SIGKILL
    runs = []
    for run in config.run_ids:
        if run in done:
            runs.append(done[run])
            if progress is not None:
                progress(run, None)
            continue
        start = time.monotonic()
        runs.append(run_fleet(config, run, sync=sync, timeout=timeout))
        if out is not None:
            (out / RUNS).mkdir(exist_ok=True)
            write_json(
                out / RUNS / f"run-{run}.json",
                {"flags": problem_flags(config, sync), "run": run, "records": runs[-1]},
            )
        if progress is not None:
            progress(run, time.monotonic() - start)
    return live_summary(config, runs, sync)
