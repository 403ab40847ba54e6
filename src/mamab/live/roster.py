"""The fleet's roster (who may talk: id, address, CURVE public key) and each node's secret key.

A roster is public: it can be copied to every host. A secret key file belongs to one node and
is readable by its owner only (mode 0600); `load_secret` refuses a file others could read.
"""

from __future__ import annotations

import os
import re
import socket
import stat
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import zmq
from zmq.utils import z85

from mamab.errors import ConfigError
from mamab.storage import atomic_write
from mamab.tomlfile import read_toml

ROSTER_NAME = "roster.toml"
SECRET_MODE = 0o600
_ADDRESS = re.compile(r"^tcp://(?P<host>[^\s:/]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})$")
_NODE_KEYS = {"id", "address", "public_key"}
_SECRET_KEYS = {"id", "public_key", "secret_key"}


@dataclass(frozen=True)
class NodeEntry:
    """One roster line: node ``id``, the ``address`` it binds and others connect to, its key."""

    id: int
    address: str
    public_key: str  # Z85, 40 characters

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])


@dataclass(frozen=True)
class Roster:
    """Every node of the fleet, ordered by id (ids are exactly 0..M-1)."""

    nodes: tuple[NodeEntry, ...]

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, node_id: int) -> NodeEntry:
        """The entry of ``node_id``; KeyError if it is not in the roster."""
        if not 0 <= node_id < len(self.nodes):
            raise KeyError(f"node {node_id} is not in the roster (ids 0..{len(self.nodes) - 1})")
        return self.nodes[node_id]

    def id_of_key(self, public_key: str | bytes) -> int | None:
        """The id of the node holding ``public_key`` (Z85 text or bytes), None for a stranger."""
        key = public_key.decode("ascii", "replace") if isinstance(public_key, bytes) else public_key
        return self._by_key.get(key)

    @cached_property
    def _by_key(self) -> dict[str, int]:
        return {entry.public_key: entry.id for entry in self.nodes}


@dataclass(frozen=True)
class SecretKey:
    """A node's CURVE key pair (Z85 text); the secret half is never shown by ``repr``."""

    node_id: int
    public_key: str
    secret_key: str = field(repr=False)


def is_z85_key(text: object) -> bool:
    """True if ``text`` is a 40-character Z85 string that encodes exactly 32 bytes."""
    if not isinstance(text, str) or len(text) != 40:
        return False
    try:
        raw = z85.decode(text.encode("ascii"))
        return len(raw) == 32 and z85.encode(raw).decode("ascii") == text
    except (ValueError, UnicodeEncodeError, OverflowError, KeyError, TypeError):
        return False


def check_address(address: object, where: str) -> str:
    """Return ``address`` if it is ``tcp://host:port`` with port 1..65535, else ConfigError."""
    match = _ADDRESS.match(address) if isinstance(address, str) else None
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise ConfigError(f"{where}: address {address!r} is not tcp://host:port (port 1..65535)")
    return address


def endpoints(address: str) -> frozenset[tuple[str, int]]:
    """The (IP address, port) pairs ``address`` (``tcp://host:port``) reaches, as the resolver
    answers now; the host name itself when it does not resolve (a remote host's name, say)."""
    match = _ADDRESS.match(address)
    if match is None:
        return frozenset({(address, 0)})
    host, port = match["host"].strip("[]"), int(match["port"])
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return frozenset({(host.lower(), port)})
    return frozenset((str(info[4][0]), port) for info in found)


def check_distinct_addresses(addresses: list[str], where: str) -> None:
    """Refuse two nodes whose addresses reach one endpoint, even spelled differently
    (``tcp://localhost:47100`` and ``tcp://127.0.0.1:47100``): ConfigError naming both."""
    seen: dict[tuple[str, int], int] = {}
    for node, address in enumerate(addresses):
        for endpoint in sorted(endpoints(address)):
            other = seen.setdefault(endpoint, node)
            if other != node:
                same = (
                    ""
                    if addresses[other] == address
                    else (
                        f" ({addresses[other]} and {address} both reach {endpoint[0]} port {endpoint[1]})"
                    )
                )
                raise ConfigError(f"{where}: nodes {other} and {node} share an address{same}")


def _node_entry(table: object, index: int, path: Path) -> NodeEntry:
    where = f"roster {path}, node #{index + 1}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: not a [[node]] table")
    missing = sorted(_NODE_KEYS - set(table))
    unknown = sorted(set(table) - _NODE_KEYS)
    if missing or unknown:
        problem = (
            f"missing {', '.join(missing)}" if missing else f"unknown key {', '.join(unknown)}"
        )
        raise ConfigError(f"{where}: {problem} (a node has id, address, public_key)")
    node_id = table["id"]
    if not isinstance(node_id, int) or isinstance(node_id, bool):
        raise ConfigError(f"{where}: id {node_id!r} is not an integer")
    if not is_z85_key(table["public_key"]):
        raise ConfigError(f"{where}: public_key is not a 40-character Z85 CURVE key")
    return NodeEntry(node_id, check_address(table["address"], where), table["public_key"])


def parse_roster(data: dict, path: Path) -> Roster:
    """Validate a parsed roster TOML; every problem is one ConfigError line naming it."""
    unknown = sorted(set(data) - {"node"})
    if unknown:
        raise ConfigError(
            f"roster {path}: unknown key {', '.join(unknown)} (expected [[node]] tables)"
        )
    tables = data.get("node")
    if not isinstance(tables, list) or not tables:
        raise ConfigError(f"roster {path}: no [[node]] tables")
    entries = [_node_entry(table, i, path) for i, table in enumerate(tables)]
    ids = sorted(entry.id for entry in entries)
    if ids != list(range(len(entries))):
        raise ConfigError(
            f"roster {path}: node ids must be 0..{len(entries) - 1}, each once (got {ids})"
        )
    entries.sort(key=lambda entry: entry.id)
    check_distinct_addresses([entry.address for entry in entries], f"roster {path}")
    seen: dict[str, int] = {}
    for entry in entries:
        if entry.public_key in seen:
            raise ConfigError(
                f"roster {path}: nodes {seen[entry.public_key]} and {entry.id} share a public_key"
            )
        seen[entry.public_key] = entry.id
    return Roster(tuple(entries))


def load_roster(path: str | Path) -> Roster:
    """Read and validate a roster TOML file (ConfigError, one line, on any problem)."""
    path = Path(path)
    return parse_roster(read_toml(path, "roster"), path)


def roster_toml(roster: Roster) -> str:
    """The TOML text of ``roster`` (what `load_roster` reads back)."""
    lines = ["# mamab fleet roster: public, copy it to every node; edit addresses for real hosts."]
    for entry in roster.nodes:
        lines += [
            "",
            "[[node]]",
            f"id = {entry.id}",
            f'address = "{entry.address}"',
            f'public_key = "{entry.public_key}"',
        ]
    return "\n".join(lines) + "\n"


def secret_toml(secret: SecretKey) -> str:
    """The TOML text of a secret key file."""
    return (
        f"# mamab node {secret.node_id} secret key: keep it private (mode 0600).\n"
        f"id = {secret.node_id}\n"
        f'public_key = "{secret.public_key}"\n'
        f'secret_key = "{secret.secret_key}"\n'
    )


def load_secret(path: str | Path) -> SecretKey:
    """Read a node's secret key file; refuse it if group/others may read it or it is not valid."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ConfigError(f"secret key file {path} does not exist") from None
    except OSError as err:
        raise ConfigError(f"cannot read secret key file {path}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(f"secret key file {path} is not a regular file")
    if mode & 0o077:
        raise ConfigError(
            f"secret key file {path} is accessible by group or others (mode {stat.S_IMODE(mode):04o}); "
            f"run chmod 600 {path}"
        )
    data = read_toml(path, "secret key file")
    if set(data) != _SECRET_KEYS:
        raise ConfigError(f"secret key file {path} must hold exactly id, public_key, secret_key")
    node_id = data["id"]
    if not isinstance(node_id, int) or isinstance(node_id, bool) or node_id < 0:
        raise ConfigError(f"secret key file {path}: id {node_id!r} is not a node id")
    for name in ("public_key", "secret_key"):
        if not is_z85_key(data[name]):
            raise ConfigError(f"secret key file {path}: {name} is not a 40-character Z85 CURVE key")
    derived = zmq.curve_public(data["secret_key"].encode("ascii")).decode("ascii")
    if derived != data["public_key"]:
        raise ConfigError(f"secret key file {path}: public_key does not match secret_key")
    return SecretKey(node_id, data["public_key"], data["secret_key"])


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically with mode 0600, whatever the umask."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SECRET_MODE)
    try:
        os.fchmod(fd, SECRET_MODE)
        os.write(fd, text.encode("ascii"))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise


def _write_public(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, with the mode the umask gives (as every file
    mamab writes but the secret keys)."""
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="ascii"))


def secret_name(node_id: int) -> str:
    return f"agent-{node_id}.secret"


def write_keys(
    n_nodes: int, port_base: int, out_dir: str | Path, host: str = "127.0.0.1", force: bool = False
) -> Path:
    """Make a fleet of ``n_nodes`` where node i listens on ``tcp://host:port_base+i``.

    Writes ``out_dir/roster.toml`` and one ``agent-<i>.secret`` (0600) per node; see
    `write_fleet`. Returns the roster's path.
    """
    if isinstance(n_nodes, bool) or not isinstance(n_nodes, int) or n_nodes < 1:
        raise ConfigError(f"the fleet needs at least one node (got {n_nodes})")
    if port_base < 1 or port_base + n_nodes - 1 > 65535:
        raise ConfigError(
            f"ports {port_base}..{port_base + n_nodes - 1} are not all within 1..65535"
        )
    return write_fleet([f"tcp://{host}:{port_base + i}" for i in range(n_nodes)], out_dir, force)


def write_fleet(addresses: list[str], out_dir: str | Path, force: bool = False) -> Path:
    """Write a roster for nodes 0..len(addresses)-1 with fresh CURVE keys, and their secrets.

    Existing key files are never overwritten unless ``force``; with ``force`` the secret files
    of ids beyond the new fleet are removed too, so the directory holds one consistent fleet.
    """
    if not addresses:
        raise ConfigError("the fleet needs at least one node")
    for i, address in enumerate(addresses):
        check_address(address, f"node {i}")
    check_distinct_addresses(list(addresses), "fleet")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output path {out} is a file, not a directory")
    existing = sorted(
        p.name for p in [out / ROSTER_NAME, *out.glob("agent-*.secret")] if p.exists()
    )
    if existing and not force:
        shown = ", ".join(existing[:3]) + (", ..." if len(existing) > 3 else "")
        raise ConfigError(f"{out} already holds key files ({shown}); use --force to replace them")
    secrets = []
    for i in range(len(addresses)):
        public, secret = zmq.curve_keypair()
        secrets.append(SecretKey(i, public.decode("ascii"), secret.decode("ascii")))
    roster = Roster(
        tuple(
            NodeEntry(k.node_id, a, k.public_key) for k, a in zip(secrets, addresses, strict=True)
        )
    )
    keep = {secret_name(i) for i in range(len(addresses))}
    try:
        out.mkdir(mode=0o700, parents=True, exist_ok=True)
        for key in secrets:
            write_private(out / secret_name(key.node_id), secret_toml(key))
        for stale in out.glob("agent-*.secret"):
            if stale.name not in keep:
                stale.unlink()
        _write_public(out / ROSTER_NAME, roster_toml(roster))
    except OSError as err:
        raise ConfigError(f"cannot write keys to {out}: {err.strerror or err}") from None
    return out / ROSTER_NAME
