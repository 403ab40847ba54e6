"""The benchmark scripts' one-line refusal of bad input (as mamab's command line does)."""

from __future__ import annotations

import sys
from pathlib import Path


def refuse(message: str) -> SystemExit:
    """A bad argument or a failed worker: one line on stderr, named by the script; exit code 2."""
    print(f"{Path(sys.argv[0]).name}: {message}", file=sys.stderr)
    return SystemExit(2)
