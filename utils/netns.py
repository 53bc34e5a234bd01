"""Throwaway network namespaces joined to this host by veth pairs: "separate hosts" for tests and benches.

`veth_hosts(n)` makes n namespaces, each with one veth pair: the host side gets `10.213.X.1/30`, the
namespace side `10.213.X.2/30` (X chosen at random per run). A process started with `host.prefix`
(`ip netns exec NAME`) runs "on" that host and reaches this one at `host.gateway`. Needs root and
iproute2; `netns_available()` says whether they are there. Everything is removed on exit.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class NetnsHost:
    """One namespace: its name, its address, and this host's address as seen from it."""

    name: str
    address: str
    gateway: str

    @property
    def prefix(self) -> list[str]:
        """Command prefix that runs a program inside the namespace."""
        return ["ip", "netns", "exec", self.name]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def netns_available() -> bool:
    """Root, iproute2, and the kernel lets us make a namespace."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        return False
    name = f"gecko-probe-{os.getpid()}"
    try:
        _ip("netns", "add", name)
    except (subprocess.CalledProcessError, OSError):
        return False
    subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30)
    return True


@contextmanager
def veth_hosts(count: int) -> Iterator[list[NetnsHost]]:
    """`count` namespaces joined to this host by veth pairs; removed on exit."""
    tag = f"{os.getpid() % 100000}"
    base = random.Random().randrange(0, 250 - count)
    hosts: list[NetnsHost] = []
    links: list[str] = []
    try:
        for index in range(count):
            name, outer, inner = f"gecko-{tag}-{index}", f"gk{tag}h{index}", f"gk{tag}n{index}"
            subnet = f"10.213.{base + index}"
            _ip("netns", "add", name)
            hosts.append(NetnsHost(name, f"{subnet}.2", f"{subnet}.1"))
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            links.append(outer)
            _ip("link", "set", inner, "netns", name)
            _ip("addr", "add", f"{subnet}.1/30", "dev", outer)
            _ip("link", "set", outer, "up")
            _ip("netns", "exec", name, "ip", "addr", "add", f"{subnet}.2/30", "dev", inner)
            _ip("netns", "exec", name, "ip", "link", "set", inner, "up")
            _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield hosts
    finally:
        for link in links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=30)
        for host in hosts:
            subprocess.run(["ip", "netns", "del", host.name], capture_output=True, timeout=30)
