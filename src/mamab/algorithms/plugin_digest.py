"""What defines a plugin algorithm, as a digest: its code objects and its packages' sources.

A plugin's ``make`` names agent classes, helpers and constants; the classes hold ``select_arm``
and ``observe``. :func:`definition_digest` walks everything reachable from ``make`` (and
``forge``) that is user code -- not mamab (the code fingerprint covers it), the standard library
or the scientific stack -- and hashes it from the code objects (bytecode, constants, names,
recursively), never from source text, so a plugin defined in a notebook or ``exec``'d code, with
no source file, is covered, and a script edited after it was loaded is hashed as it runs. It
also names the top-level packages that user code comes from (not ``__main__``), whose ``.py``
files :func:`package_sources` lists. Hashes are stable across processes (no ``id``, no
set order), so workers and the main process agree.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import sys
import types
from pathlib import Path
from typing import Any

#: Top-level packages never walked into (named only): mamab itself and the libraries it uses.
LIBRARIES = frozenset(
    {
        "mamab",
        "builtins",
        "numpy",
        "numba",
        "scipy",
        "networkx",
        "pandas",
        "pyarrow",
        "matplotlib",
        "click",
        "dask",
        "distributed",
        "zmq",
        "llvmlite",
    }
) | frozenset(sys.stdlib_module_names)
#: Modules without a package of files: scripts and notebooks (their code objects count).
NO_PACKAGE = frozenset({"__main__", "builtins"})
_PLAIN = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))


def definition_digest(*roots: object) -> tuple[str, frozenset[str]]:
    """sha256 over the user code reachable from ``roots``, and the packages it comes from."""
    walker = _Walker()
    for root in roots:
        walker.visit(root)
    return walker.digest.hexdigest(), frozenset(walker.packages)


def package_sources(top: str) -> list[Path]:
    """The .py files of the imported top-level package (or module) ``top``, sorted."""
    module = sys.modules.get(top)
    if module is None or top in NO_PACKAGE:
        return []
    paths = [Path(p) for p in getattr(module, "__path__", ())]
    if paths:
        return sorted({f for p in paths for f in p.rglob("*.py")})
    file = getattr(module, "__file__", None)
    return [Path(file)] if file and file.endswith(".py") else []


def file_digest(path: Path) -> bytes:
    """sha256 of a file's bytes, read again only when its size or modification time changes."""
    stat = path.stat()
    return _file_digest(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4096)
def _file_digest(path: Path, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def _module(obj: object) -> str:
    """Where ``obj`` was defined; code exec'd without a ``__name__`` counts as ``__main__``."""
    module = getattr(obj, "__module__", None)  # a descriptor on some types: not a name
    return module if isinstance(module, str) and module else "__main__"


def _library(obj: object) -> bool:
    """Whether ``obj`` comes from a library (named only, not walked into)."""
    top = _module(obj).partition(".")[0]
    if top == "builtins":  # a real builtin, or a class exec'd without __name__ (named so too)
        return getattr(builtins, getattr(obj, "__qualname__", ""), None) is obj
    return top in LIBRARIES


class _Walker:
    """Feeds a sha256 with a canonical description of every user definition it reaches."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.packages: set[str] = set()
        self._seen: set[int] = set()
        self._keep: list[object] = []  # visited objects stay alive: ids are not reused

    def put(self, *parts: object) -> None:
        for part in parts:
            self.digest.update(str(part).encode() + b"\0")

    def visit(self, obj: object) -> None:
        if isinstance(obj, _PLAIN):
            self.put(type(obj).__name__, repr(obj))
            return
        if isinstance(obj, tuple | list):
            self.put(type(obj).__name__, len(obj))
            for item in obj:
                self.visit(item)
            return
        if isinstance(obj, frozenset | set):
            self.put(type(obj).__name__, sorted(repr(item) for item in obj))
            return
        if isinstance(obj, types.ModuleType):  # named, never walked: a user's by its files
            self._module_ref(obj)
            return
        if id(obj) in self._seen:
            self.put("seen", getattr(obj, "__qualname__", type(obj).__name__))
            return
        self._seen.add(id(obj))
        self._keep.append(obj)
        if isinstance(obj, dict):
            self.put("dict", len(obj))
            for k in sorted(obj, key=repr):
                self.visit(k)
                self.visit(obj[k])
        elif isinstance(obj, staticmethod | classmethod):
            self.put(type(obj).__name__)
            self.visit(obj.__func__)
        elif isinstance(obj, property):
            self.put("property")
            for accessor in (obj.fget, obj.fset, obj.fdel):
                self.visit(accessor)
        elif isinstance(obj, functools.partial):
            self.put("partial")
            self.visit((obj.func, obj.args, obj.keywords))
        elif isinstance(obj, types.MethodType):
            self.visit(obj.__func__)
        elif isinstance(obj, types.FunctionType):
            self._function(obj)
        elif isinstance(obj, type):
            self._class(obj)
        elif type(obj).__module__ == "numpy" and hasattr(obj, "tobytes"):  # an array or scalar
            self.put("array", obj.dtype, getattr(obj, "shape", ()))
            self.put(hashlib.sha256(obj.tobytes()).hexdigest())
        else:  # a module, a builtin, an instance: its kind; a user instance: its class and state
            kind = type(obj)
            self.put("object", kind.__module__, kind.__qualname__)
            if not _library(kind):
                self.visit(kind)
                self.visit(getattr(obj, "__dict__", None))

    def _module_ref(self, module: types.ModuleType) -> None:
        name = module.__name__
        self.put("module", name)
        top = name.partition(".")[0]
        if top not in LIBRARIES and top not in NO_PACKAGE:
            self.packages.add(top)

    def _user(self, obj: object) -> bool:
        if _library(obj):
            self.put("library", _module(obj), getattr(obj, "__qualname__", ""))
            return False
        top = _module(obj).partition(".")[0]
        if top not in NO_PACKAGE:
            self.packages.add(top)
        return True

    def _function(self, fn: types.FunctionType) -> None:
        if not self._user(fn):
            return
        self.put("function", _module(fn), fn.__qualname__)
        self._code(fn.__code__, fn.__globals__)
        self.visit(fn.__defaults__)
        self.visit(fn.__kwdefaults__)
        for cell in fn.__closure__ or ():
            try:
                self.visit(cell.cell_contents)
            except ValueError:  # an empty cell
                self.put("empty cell")

    def _code(self, code: types.CodeType, globals_: dict[str, Any]) -> None:
        self.put(
            code.co_code.hex(),
            code.co_names,
            code.co_varnames,
            code.co_freevars,
            code.co_cellvars,
            code.co_argcount,
            code.co_posonlyargcount,
            code.co_kwonlyargcount,
            code.co_flags,
        )
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._code(const, globals_)
            else:
                self.visit(const)
        for name in code.co_names:  # globals it may read (attribute names too: harmless)
            if name in globals_:
                self.put("global", name)
                self.visit(globals_[name])

    def _class(self, cls: type) -> None:
        if not self._user(cls):
            return
        self.put("class", _module(cls), cls.__qualname__)
        for base in cls.__bases__:
            self.visit(base)
        for name, value in vars(cls).items():
            if name in ("__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"):
                continue
            self.put("attribute", name)
            self.visit(value)
