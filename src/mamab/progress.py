"""Progress of long work: a tqdm bar on a terminal, a plain line every ~30 s elsewhere.

Off a terminal (CI, nohup, a notebook) a bar is noise or invisible, and silence for minutes looks
like a hang: :class:`Progress` then writes one line per interval, ``desc: done/total unit (p%),
elapsed, ETA``, from a background ticker (so a long task that reports nothing in between still
shows the work is alive) and at the end. The interval is ``MAMAB_PROGRESS_INTERVAL`` seconds
(default 30) or the ``interval`` argument; tests give a short interval and a fake clock.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

#: Seconds between plain progress lines (overridden by the environment variable of that name).
INTERVAL = 30.0
INTERVAL_ENV = "MAMAB_PROGRESS_INTERVAL"


def interval_seconds() -> float:
    """The plain-line interval: ``MAMAB_PROGRESS_INTERVAL`` if set to a positive number, else 30."""
    try:
        value = float(os.environ.get(INTERVAL_ENV, INTERVAL))
    except ValueError:
        return INTERVAL
    return value if value > 0 else INTERVAL


def _amount(value: float) -> str:
    """1234 -> '1234', 1.5e9 -> '1.5G' (agent-steps are large)."""
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e4, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:g}"


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


class Progress:
    """A done/total counter shown as a bar on a terminal, or as periodic plain lines.

    ``enabled=False`` shows nothing; ``tty`` (default: ``stream.isatty()``) picks the bar.
    ``clock`` and ``background`` (the ticker thread of plain mode) are seams for tests.
    """

    def __init__(
        self,
        total: float,
        desc: str,
        unit: str = "it",
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        tty: bool | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,
    ) -> None:
        self.total, self.desc, self.unit, self.done, self.note = total, desc, unit, 0.0, ""
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(self.stream.isatty()) if tty is None else tty
        self.interval = interval_seconds() if interval is None else interval
        self.clock = clock
        self.start = self.last = clock()
        self._bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if not enabled:
            return
        if self.tty:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=desc,
                unit=unit,
                unit_scale=total >= 10_000,
                leave=False,
                file=self.stream,
            )
        elif background:
            self._ticker = threading.Thread(
                target=self._tick_forever, daemon=True, name="mamab-progress"
            )
            self._ticker.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, amount: float = 1) -> None:
        """Count ``amount`` more done (a simulation's ``progress`` callback)."""
        with self._lock:
            self.done += amount
        if self._bar is not None:
            self._bar.update(amount)
        else:
            self.tick()

    def describe(self, desc: str | None = None, note: str | None = None) -> None:
        """Change the label (``desc``) or the note after the numbers (``note``: what runs now)."""
        self.desc = self.desc if desc is None else desc
        self.note = self.note if note is None else note
        if self._bar is not None:
            self._bar.set_description(self.desc, refresh=False)
            if note is not None:
                self._bar.set_postfix_str(note)

    def write(self, text: str) -> None:
        """A message line that does not break the bar."""
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def line(self) -> str:
        """'desc: 3/10 tasks (30%), 1.5 min elapsed, ETA 3.5 min'."""
        elapsed = self.clock() - self.start
        with self._lock:
            done = self.done
        share = f" ({100 * done / self.total:.0f}%)" if self.total else ""
        if 0 < done < self.total:
            eta = f"ETA {_duration(elapsed * (self.total - done) / done)}"
        else:
            eta = "ETA unknown" if done < self.total else "done"
        note = f" [{self.note}]" if self.note else ""
        return (
            f"{self.desc}: {_amount(done)}/{_amount(self.total)} {self.unit}{share}, "
            f"{_duration(elapsed)} elapsed, {eta}{note}"
        )

    def tick(self) -> bool:
        """Write a plain line if one is due (an interval since the last); True if written."""
        if not self.enabled or self._bar is not None:
            return False
        now = self.clock()
        with self._lock:
            if now - self.last < self.interval:
                return False
            self.last = now
        print(self.line(), file=self.stream, flush=True)
        return True

    def _tick_forever(self) -> None:
        while not self._stop.wait(min(max(self.interval, 0.05), 1.0)):
            self.tick()

    def close(self) -> None:
        """Stop the ticker; off a terminal, a last line if any was written (the total time)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self.enabled and self.last != self.start:
            print(self.line(), file=self.stream, flush=True)
            self.last = self.start  # once
