"""Network namespaces joined by veth pairs, with a fault proxy in the middle (test tooling).

``NetLab(n)`` makes n node namespaces and one hub namespace, all named with a tag unique to
this run, and joins each node to the hub by a veth pair:

    node i:  veth 198.18.i.2/24, route to 198.18.0.0/15 via 198.18.i.1, no default route
    hub:     veth 198.18.i.1/24 per node, IP forwarding off (the namespace default)

Addresses come from the benchmarking range 198.18.0.0/15 (RFC 2544) only, and no namespace has
a route out of it, so nothing a test sends can leave the namespaces it made. The hub forwards
nothing itself: a policy rule (``iif <veth> lookup 100``, table 100 holding ``local
198.18.0.0/15``) hands every packet arriving from a node to the hub's own stack, where the fault
proxy (tests/faultproxy.py) accepts it, as the node it was meant for, and relays it.

``down()`` kills every process started with :meth:`popen` (by its id) and deletes the
namespaces, which deletes their veths; it is safe to call twice and after a failed ``up()``.
Names carry the test process's id (``mb<pid>x<hex>-...``): a lab whose process died without
``down()`` (SIGKILL) is deleted by the next ``up()``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
from collections.abc import Sequence

from faultproxy import FaultProxy


class LabRefused(Exception):
    """The kernel (or the user) cannot make the lab: the test is skipped with this line."""


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise LabRefused(f"`ip {' '.join(args)}` failed: {proc.stderr.strip()}")


def remove_orphans() -> list[str]:
    """Delete the namespaces of labs whose test process is gone (killed before ``down()``)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    removed = []
    for line in listed.splitlines():
        found = re.match(r"(mb(\d+)x[0-9a-f]{2}-\S+)", line)
        if found and not os.path.exists(f"/proc/{found[2]}"):
            subprocess.run(["ip", "netns", "del", found[1]], capture_output=True, timeout=30)
            removed.append(found[1])
    return removed


class NetLab:
    """``size`` node namespaces around a hub (see the module docstring)."""

    PORT = 5000  # every node listens on this port of its own address, as on real hosts

    def __init__(self, size: int) -> None:
        self.size = size
        self.tag = f"mb{os.getpid()}x{secrets.token_hex(1)}"  # veth names: 15 characters at most
        self.hub = f"{self.tag}-hub"
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        self.proxy: FaultProxy | None = None

    def node(self, i: int) -> str:
        return f"{self.tag}-n{i}"

    @staticmethod
    def address(i: int) -> str:
        return f"198.18.{i}.2"

    def up(self) -> NetLab:
        if os.geteuid() != 0:
            raise LabRefused("network namespaces need root")
        if shutil.which("ip") is None:
            raise LabRefused("no `ip` command (iproute2)")
        remove_orphans()
        for ns in (self.hub, *map(self.node, range(self.size))):
            _ip("netns", "add", ns)
            self.namespaces.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", self.hub, "route", "add", "local", "198.18.0.0/15", "dev", "lo", "table", "100")
        for i in range(self.size):
            hub_end, node_end = f"{self.tag}h{i}", f"{self.tag}n{i}"
            _ip(
                "-n",
                self.hub,
                "link",
                "add",
                hub_end,
                "type",
                "veth",
                "peer",
                "name",
                node_end,
                "netns",
                self.node(i),
            )
            _ip("-n", self.hub, "addr", "add", f"198.18.{i}.1/24", "dev", hub_end)
            _ip("-n", self.hub, "link", "set", hub_end, "up")
            _ip("-n", self.hub, "rule", "add", "iif", hub_end, "lookup", "100")
            _ip("-n", self.node(i), "addr", "add", f"{self.address(i)}/24", "dev", node_end)
            _ip("-n", self.node(i), "link", "set", node_end, "up")
            _ip("-n", self.node(i), "route", "add", "198.18.0.0/15", "via", f"198.18.{i}.1")
        nodes = {self.address(i): i for i in range(self.size)}
        try:
            self.proxy = FaultProxy(self.hub, self.PORT, nodes).start()
        except OSError as err:
            raise LabRefused(f"the fault proxy cannot run in {self.hub}: {err}") from None
        return self

    def popen(self, i: int, argv: Sequence[str], **kwargs) -> subprocess.Popen:
        """Start ``argv`` in node ``i``'s namespace (``ip netns exec`` execs it: same pid)."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.node(i), *argv], **kwargs)
        self.procs.append(proc)
        return proc

    def down(self) -> list[str]:
        """Kill the lab's processes, stop the proxy, delete the namespaces; what is left over."""
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        if self.proxy is not None:
            self.proxy.close()
        if shutil.which("ip") is None:
            return []  # nothing was made
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self.namespaces = []
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        return [line for line in (listed + links).splitlines() if self.tag in line]
