"""Exceptions that carry a user-facing, one-line explanation."""


class ConfigError(ValueError):
    """A configuration, flag or input file is invalid; the CLI turns it into exit code 2."""


class InvalidMessage(ValueError):
    """An agent refused a message; its state is unchanged."""


class InvalidObservation(ValueError):
    """An agent refused ``observe(arm, reward)``: not the arm it selected, or not a finite reward;
    its state is unchanged."""
