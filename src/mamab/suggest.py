"""The nearest valid name to a typo, for one-line errors ("did you mean 'lcc-ucb'?").

Light on purpose (difflib, imported on an error only): the command line's option types use it
before any heavy import.
"""

from __future__ import annotations

from collections.abc import Iterable


def nearest(value: object, names: Iterable[str]) -> str | None:
    """The valid name closest to ``value`` (difflib's ratio of at least 0.6), or None."""
    import difflib  # only on an error: `mamab --help` stays quick

    if not isinstance(value, str):
        return None
    names = list(names)  # read twice below: an iterator would be spent
    found = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
    if not found:  # a different case is a typo too ("LCC-UCB")
        lowered = {name.lower(): name for name in names}
        found = difflib.get_close_matches(value.lower(), list(lowered), n=1, cutoff=0.6)
        found = [lowered[f] for f in found]
    return found[0] if found else None


def unknown(kind: str, value: object, names: Iterable[str]) -> str:
    """``unknown <kind> 'x'; did you mean 'y'? (choose one of a, b, c)``, or without a close
    name ``unknown <kind> 'x'; choose one of a, b, c``."""
    names = list(names)
    guess = nearest(value, names)
    every = ", ".join(names)
    if guess is None:
        return f"unknown {kind} {value!r}; choose one of {every}"
    return f"unknown {kind} {value!r}; did you mean {guess!r}? (choose one of {every})"
