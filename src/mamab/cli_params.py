"""``--param NAME=VALUE``: an algorithm's parameters on the command line, from its spec.

Every :class:`~mamab.AlgorithmParams` field an algorithm's spec ``reads`` (k_prime, sub_epochs,
demab_radius, ...) and every plugin parameter it declares (``parameters``; any, when it declares
none) is settable; a value is converted to the field's type and checked by ``AlgorithmParams``.
A name the chosen algorithm does not read is refused in one line naming the ones it does. Parameters
left out keep their defaults, so configuration ids of runs that set none do not change.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mamab.algorithms.params import AlgorithmParams, ParamValue
from mamab.errors import ConfigError
from mamab.suggest import nearest

if TYPE_CHECKING:
    from mamab.algorithms.spec import AlgorithmSpec

#: The built-in parameters (AlgorithmParams' fields besides ``extra``) and their defaults.
BUILT_IN_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(AlgorithmParams) if f.name != "extra"
}


def _field_type(name: str) -> type:
    """The value type of a built-in field (``int | None`` is int)."""
    hint = typing.get_type_hints(AlgorithmParams)[name]
    kinds = [k for k in typing.get_args(hint) if k is not type(None)] or [hint]
    return kinds[0]


def split(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` as (name, raw value text), or refuse."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise ConfigError(f"--param takes NAME=VALUE, got {text!r}")
    return name.strip(), raw.strip()


def _declared_default(spec: AlgorithmSpec, name: str) -> object:
    """The default of plugin parameter ``name`` if ``spec`` declares it as a Parameter."""
    for parameter in spec.parameters or ():
        if not isinstance(parameter, str) and parameter.name == name:
            return parameter.default
    return None


def plugin_value(raw: str, default: object = None) -> ParamValue:
    """A plugin parameter's text as an integer, a number, true/false, else text; kept as text
    when its declared default is text (``--param mode=1`` is the string '1' then)."""
    if isinstance(default, str):
        return raw
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


def field_value(name: str, raw: str) -> ParamValue:
    """A built-in parameter's text converted to its field's type (checked later, in
    ``AlgorithmParams``)."""
    kind = _field_type(name)
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"--param {name}={raw}: {name} must be an integer") from None
    if kind is float:
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"--param {name}={raw}: {name} must be a number") from None
        if not math.isfinite(value):
            raise ConfigError(f"--param {name}={raw}: {name} must be a finite number")
        return value
    return raw


def settable(spec: AlgorithmSpec) -> list[str]:
    """The parameter names ``--param`` takes for ``spec``: the fields it reads, then its own."""
    return [*spec.reads, *(spec.parameter_names or ())]


def refuse(spec: AlgorithmSpec, name: str) -> ConfigError:
    """The one-line error for a parameter ``spec`` does not read, naming the ones it does."""
    names = settable(spec)
    message = f"{spec.name} does not read parameter {name!r}"
    if (guess := nearest(name, names)) is not None:
        message += f"; did you mean {guess!r}?"
    if spec.parameters is None:
        own = "any parameter of its own"
        takes = f"it reads {', '.join(names)} and {own}" if names else f"it takes {own}"
    else:
        takes = f"it reads {', '.join(names)}" if names else "it takes no parameter"
    return ConfigError(f"{message} ({takes})")


def algorithm_params(
    spec: AlgorithmSpec, texts: Sequence[str], alpha: float | None = None
) -> AlgorithmParams:
    """The :class:`AlgorithmParams` of ``--param`` texts (and ``--alpha``) for ``spec``."""
    built: dict[str, ParamValue] = {}
    extra: dict[str, ParamValue] = {}
    for text in texts:
        name, raw = split(text)
        if name in built or name in extra:
            raise ConfigError(f"--param {name} given twice")
        if name in BUILT_IN_DEFAULTS:
            if name not in spec.reads:
                raise refuse(spec, name)
            built[name] = field_value(name, raw)
        elif name == "extra" or (
            spec.parameters is not None and name not in (spec.parameter_names or ())
        ):
            raise refuse(spec, name)
        else:
            extra[name] = plugin_value(raw, _declared_default(spec, name))
    if alpha is not None:
        if "alpha" in built:
            raise ConfigError("give --alpha or --param alpha=..., not both")
        built["alpha"] = alpha
    return AlgorithmParams(**built, extra=extra)  # type: ignore[arg-type]


def param_texts(params: AlgorithmParams) -> list[str]:
    """The ``--param`` texts that give ``params`` back (alpha aside: it has ``--alpha``):
    every built-in field away from its default, then the plugin parameters."""
    texts = [
        f"{name}={_text(getattr(params, name))}"
        for name, default in BUILT_IN_DEFAULTS.items()
        if name != "alpha" and getattr(params, name) != default
    ]
    return texts + [f"{name}={_text(value)}" for name, value in params.extra]


def _text(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)
