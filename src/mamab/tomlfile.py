"""Read a TOML file, or fail with one line naming the file and what is wrong with it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from mamab.errors import ConfigError


def read_toml(path: Path, what: str) -> dict:
    """The parsed file; ``what`` names it in errors ("sweep file", "roster", ...)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read {what} {path}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{what} {path} is not valid TOML: {err}") from None
