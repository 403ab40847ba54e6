"""Child processes that die with their parent, even when the parent is killed with SIGKILL."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

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
