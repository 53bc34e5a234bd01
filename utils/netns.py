"""Throwaway network namespaces joined to this host by veth pairs: "separate hosts" for tests and benches.

`veth_hosts(n)` makes n namespaces, each with one veth pair on its own /30 of 10.213.0.0/16 (chosen at
random per run, so concurrent runs rarely meet): the host side gets the first address, the namespace
side the second. A process started with `host.prefix`
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
    """Root, iproute2, and the kernel lets us make a namespace with a veth pair into it."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        return False
    try:
        with veth_hosts(1):
            return True
    except (subprocess.CalledProcessError, OSError):
        return False


@contextmanager
def veth_hosts(count: int) -> Iterator[list[NetnsHost]]:
    """`count` namespaces joined to this host by veth pairs; removed on exit."""
    tag = f"{os.getpid() % 100000}"
    base = random.Random().randrange(0, 16384 - count)  # /30 blocks of 10.213.0.0/16
    hosts: list[NetnsHost] = []
    links: list[str] = []
    try:
        for index in range(count):
            name, outer, inner = f"gecko-{tag}-{index}", f"gk{tag}h{index}", f"gk{tag}n{index}"
            block = base + index
            prefix = f"10.213.{block // 64}."
            outer_ip, inner_ip = f"{prefix}{block % 64 * 4 + 1}", f"{prefix}{block % 64 * 4 + 2}"
            _ip("netns", "add", name)
            hosts.append(NetnsHost(name, inner_ip, outer_ip))
            _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            links.append(outer)
            _ip("link", "set", inner, "netns", name)
            _ip("addr", "add", f"{outer_ip}/30", "dev", outer)
            _ip("link", "set", outer, "up")
            _ip("netns", "exec", name, "ip", "addr", "add", f"{inner_ip}/30", "dev", inner)
            _ip("netns", "exec", name, "ip", "link", "set", inner, "up")
            _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield hosts
    finally:
        for link in links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=30)
        for host in hosts:
            subprocess.run(["ip", "netns", "del", host.name], capture_output=True, timeout=30)
