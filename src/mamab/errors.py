"""Exceptions that carry a user-facing, one-line explanation."""


class ConfigError(ValueError):
    """A configuration, flag or input file is invalid; the CLI turns it into exit code 2."""


class InvalidMessage(ValueError):
    """An agent refused a message; its state is unchanged."""


class InvalidObservation(ValueError):
    """An agent refused ``observe(arm, reward)``: not the arm it selected, or not a finite reward;
    its state is unchanged."""


class PluginError(RuntimeError):
    """A plugin algorithm's code failed: it raised, exited, returned an arm out of range or
    messaged a non-neighbour. The message is one line naming the plugin; the CLI turns it into
    exit code 1 (the plugin's fault, not the user's input) and shows the traceback (kept as
    ``__cause__``) only under ``mamab --debug``."""
