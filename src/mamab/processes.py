"""Child processes that die with their parent, even when the parent is killed with SIGKILL."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCH_SECONDS = 1.0


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when ``parent`` dies, even by SIGKILL.

    On Linux the kernel sends SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG); everywhere
    a daemon thread also checks every second that the parent is still ours, as a fallback
    (another OS, or a parent that died before prctl took effect).
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before prctl: nobody will signal us
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="mamab-watch").start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


@contextlib.contextmanager
def exit_on_signals(signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """Turn ``signals`` into ``SystemExit(128 + signal)`` in the main thread while inside.

    Python's default for SIGTERM ends the process at once, skipping ``finally`` blocks and
    context managers: temporary secrets would stay on disk and children would run on. With this,
    they run. A second signal during the clean-up is ignored. Handlers are restored on exit.
    """

    def stop(signum: int, frame: object) -> None:
        for other in signals:
            signal.signal(other, signal.SIG_IGN)  # let the clean-up finish
        print(f"mamab: {signal.Signals(signum).name}: stopping", file=sys.stderr, flush=True)
        raise SystemExit(128 + signum)

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers (and receives signals)
        return
    previous = {s: signal.signal(s, stop) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
