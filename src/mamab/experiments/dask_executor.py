"""Tasks on a Dask cluster: the same task files, byte for byte, as the local executor writes.

Workers compute a task and either ship its file's bytes back to this process, which writes it
atomically (default: no shared disk needed), or, with ``shared=True``, write it themselves into
the output directory, which must then be the same path on every worker. Dask reschedules the
task of a worker that dies (up to ``retries`` more times); writes are atomic and a task's bytes
depend only on its configuration, so nothing is lost or duplicated.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mamab.errors import ConfigError
from mamab.experiments.tasks import Task, compute_task, run_task, write_task

CONNECT_TIMEOUT = "5s"


def _connect(scheduler: str, timeout: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(
            "the Dask executor needs dask.distributed: pip install 'distributed>=2024.1' (or, "
            "in mamab's checkout, pip install '.[dask]')"
        ) from None
    try:
        return Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {reason}") from None


class DaskExecutor:
    """Run tasks on a ``distributed.Client`` (given, or connected to ``scheduler``)."""

    def __init__(
        self,
        client: Any = None,
        scheduler: str | None = None,
        shared: bool = False,
        retries: int = 3,
        timeout: str = CONNECT_TIMEOUT,
    ):
        if client is None and not scheduler:
            raise ConfigError("the Dask executor needs --scheduler tcp://HOST:PORT (or a Client)")
        self.client = client
        self.scheduler = scheduler
        self.shared = shared
        self.retries = retries
        self.timeout = timeout

    def run(self, tasks: list[Task], out: Path) -> Iterator[tuple[Task, int]]:
        from distributed import as_completed

        own = self.client is None
        client = self.client or _connect(self.scheduler, self.timeout)
        try:
            futures = {}
            for task in tasks:
                if self.shared:
                    future = client.submit(
                        run_task, task, out, key=f"mamab-{task.name}", retries=self.retries
                    )
                else:
                    future = client.submit(
                        compute_task, task, key=f"mamab-{task.name}", retries=self.retries
                    )
                futures[future] = task
            for future in as_completed(futures, loop=client.loop):
                task = futures[future]
                value = future.result()
                if not self.shared:
                    write_task(task, out, value)
                yield task, task.agent_steps
        finally:
            if own:
                client.close()
