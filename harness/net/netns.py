"""Network namespaces on a bridge for one run, following the safety rules in GOTCHAS.md.

- The bridge has an address in the cluster subnet, so the root namespace routes the subnet locally.
- An unreachable route for the whole Quorum range (metric 4096) catches traffic if the bridge is gone,
  so it fails at once on this machine instead of leaving through the default gateway.
- `create` refuses a subnet that overlaps an existing route or address.
- Claiming a subnet (overlap check, guard route, the bridge with its address) and removing the guard when no
  Quorum bridge is left happen under one machine-wide lock, so runs side by side cannot race: without it, one
  run's teardown could remove the guard between another run adding it and creating its bridge.
- Bridge traffic is accepted explicitly in FORWARD (Docker sets the policy to DROP); the rules carry a
  comment with the run id and are removed on teardown.
- `assert_local` checks that `ip route get` names the bridge before the harness sends traffic.
Every object is recorded in the run state *before* it is created, so teardown after a crash finds it.
"""

from __future__ import annotations

import fcntl
import ipaddress
import json
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import ClusterError
from harness.net import shaping
from harness.shell import CommandError, run
from harness.topology import QUORUM_RANGE, bridge_address

PREFIX_NETNS = "qrm-"
PREFIX_BRIDGE = "qb-"  # the process backend's bridges
PREFIX_DOCKER_BRIDGE = "qd-"  # the bridges of the docker and kind backends' Docker networks
BRIDGE_PREFIXES = (PREFIX_BRIDGE, PREFIX_DOCKER_BRIDGE)
PREFIX_VETH = "qv-"
GUARD_METRIC = "4096"
NETWORK_LOCK = Path("/run/lock/quorum-network.lock")  # tmpfs: gone at reboot; flock ends with its holder


def bridge_name(run_id: str) -> str:
    return f"{PREFIX_BRIDGE}{run_id}"


def netns_name(run_id: str, host: str) -> str:
    return f"{PREFIX_NETNS}{run_id}-{host}"


def veth_name(run_id: str, index: int) -> str:
    return f"{PREFIX_VETH}{run_id}-{index}"


def comment(run_id: str) -> str:
    return f"quorum:{run_id}"


def forward_rules(run_id: str) -> list[list[str]]:
    bridge = bridge_name(run_id)
    return [["FORWARD", "-i", bridge, "-o", bridge, "-m", "comment", "--comment", comment(run_id), "-j", "ACCEPT"]]


def _routes() -> list[dict]:
    return json.loads(run(["ip", "-j", "-4", "route", "show", "table", "all"]) or "[]")


def overlapping_routes(subnet: ipaddress.IPv4Network) -> list[str]:
    """Existing routes or addresses that overlap `subnet`, except Quorum's own guard and the default route."""
    found = []
    for route in _routes():
        dst = route.get("dst", "")
        if dst in ("default", "") or route.get("type") in ("local", "broadcast"):
            continue
        try:
            network = ipaddress.ip_network(dst, strict=False)
        except ValueError:
            continue
        if network == QUORUM_RANGE and route.get("type") == "unreachable":
            continue  # our own guard
        if network.overlaps(subnet):
            found.append(f"route {dst} dev {route.get('dev', route.get('type', '?'))}")
    for link in json.loads(run(["ip", "-j", "-4", "addr"]) or "[]"):
        for info in link.get("addr_info", []):
            if ipaddress.ip_address(info["local"]) in subnet:
                found.append(f"address {info['local']} on {link['ifname']}")
    return found


def guard_route_present() -> bool:
    return any(r.get("type") == "unreachable" and r.get("dst") == str(QUORUM_RANGE) for r in _routes())


def add_guard_route() -> None:
    if not guard_route_present():
        run(["ip", "route", "add", "unreachable", str(QUORUM_RANGE), "metric", GUARD_METRIC])


def remove_guard_route() -> None:
    if guard_route_present():
        run(["ip", "route", "del", "unreachable", str(QUORUM_RANGE), "metric", GUARD_METRIC], check=False)


# a holder does a few `ip`/`iptables` calls or one `docker network create`: seconds. Waiting longer means that
# holder hangs (a stuck Docker engine), and waiting forever would hang this run too, silently.
NETWORK_LOCK_TIMEOUT_S = 120.0


@contextmanager
def network_lock(timeout_s: float = NETWORK_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Machine-wide: one run at a time claims a subnet or decides the guard route is unused."""
    NETWORK_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with NETWORK_LOCK.open("a") as handle:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ClusterError(
                        f"another process has held Quorum's network lock ({NETWORK_LOCK}) for over {timeout_s:.0f} s",
                        f"find it with `fuser -v {NETWORK_LOCK}` (a `quorum up` stuck on the Docker engine?) and stop it",
                    ) from None
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


Reclaim = Callable[[ipaddress.IPv4Network], list[str]]


@contextmanager
def claim_subnet(subnet: ipaddress.IPv4Network, reclaim: Reclaim = lambda _: []) -> Iterator[None]:
    """Refuse a subnet in use, add the guard route, and let the caller create its bridge (with an address in
    `subnet`) before any other run may check or claim: the bridge is what keeps the guard in place. First,
    `reclaim` removes what runs this machine no longer knows left in `subnet` (harness/backends/orphans.py)."""
    with network_lock():
        for removed in reclaim(subnet):
            print(f"quorum: removed {removed}, left by a run this machine no longer knows (killed, then a reboot)",
                  file=sys.stderr)
        overlaps = overlapping_routes(subnet)
        if overlaps:
            raise ClusterError(
                f"subnet {subnet} is already in use on this machine: {'; '.join(overlaps)}",
                "take the other cluster down (`quorum down --all`), or set network.subnet to a free /24 in 10.213.0.0/16",
            )
        add_guard_route()
        yield


def remove_guard_route_if_unused() -> None:
    """The guard goes with the last Quorum bridge of any backend."""
    with network_lock():
        if not quorum_bridges():
            remove_guard_route()


def quorum_bridges() -> list[str]:
    links = json.loads(run(["ip", "-j", "link", "show", "type", "bridge"]) or "[]")
    return [link["ifname"] for link in links if link["ifname"].startswith(BRIDGE_PREFIXES)]


def link_exists(name: str) -> bool:
    return run(["ip", "link", "show", name], check=False).strip() != ""


def assert_local(address: str, bridge: str) -> None:
    """Refuse to send traffic to `address` unless the kernel routes it to our bridge."""
    route = run(["ip", "route", "get", address], check=False)
    if f" dev {bridge} " not in f" {route} ":
        raise ClusterError(
            f"{address} is not routed to the Quorum bridge {bridge} (kernel says: {route.strip() or 'no route'}); "
            "refusing to send traffic that could leave the machine",
            "bring the cluster up again (`quorum down --all && quorum up`)",
        )


def host_link(netns: str) -> str:
    """The host's link: the interface holding its address. eth0, except on a docker host reconnected after
    a disconnect, where Docker names the new interface eth1 (and renaming it breaks Docker's next disconnect)."""
    addresses = json.loads(run(["ip", "-n", netns, "-j", "-4", "addr", "show"], check=False) or "[]")
    names = [a["ifname"] for a in addresses if a.get("ifname") != "lo" and a.get("addr_info")]
    return names[0] if names else "eth0"


def shape(netns: str, rate_mbit: float, burst_kb: int = 256, latency_ms: int = 50) -> None:
    """The topology's own limit on what a host sends on its link (a token bucket filter, the baseline's handle)."""
    run(["ip", "netns", "exec", netns, *shaping.tbf(host_link(netns), rate_mbit, burst_kb=burst_kb,
                                                    latency_ms=latency_ms)])


class RunNetwork:
    """The bridge, namespaces and veths of one run. `record(kind, value)` journals before each creation."""

    def __init__(self, run_id: str, subnet: ipaddress.IPv4Network, record: Callable[[str, object], None],
                 reclaim: Reclaim = lambda _: []) -> None:
        self.reclaim = reclaim
        self.run_id = run_id
        self.subnet = subnet
        self.bridge = bridge_name(run_id)
        self.record = record

    def create(self, hosts: list[tuple[str, ipaddress.IPv4Address]], link_rate_mbit: float | None = None) -> None:
        if link_exists(self.bridge):
            raise ClusterError(f"bridge {self.bridge} already exists", "quorum down --all removes leftovers of old runs")
        with claim_subnet(self.subnet, self.reclaim):
            self.record("guard_route", True)
            self.record("bridge", self.bridge)
            run(["ip", "link", "add", self.bridge, "type", "bridge"])
            run(["ip", "addr", "add", f"{bridge_address(self.subnet)}/{self.subnet.prefixlen}", "dev", self.bridge])
            run(["ip", "link", "set", self.bridge, "up"])
        for rule in forward_rules(self.run_id):
            self.record("iptables", rule)
            run(["iptables", "-w", "-I", rule[0], "1", *rule[1:]])
        for index, (host, address) in enumerate(hosts):
            netns, veth = netns_name(self.run_id, host), veth_name(self.run_id, index)
            self.record("netns", netns)
            run(["ip", "netns", "add", netns])
            self.record("veth", veth)
            run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns])
            run(["ip", "link", "set", veth, "master", self.bridge, "up"])
            inside = ["ip", "-n", netns]
            run([*inside, "link", "set", "lo", "up"])
            run([*inside, "addr", "add", f"{address}/{self.subnet.prefixlen}", "dev", "eth0"])
            run([*inside, "link", "set", "eth0", "up"])
            if link_rate_mbit:
                shape(netns, link_rate_mbit)
            # no default route: a host can reach its subnet and nothing else
        for _, address in hosts:
            assert_local(str(address), self.bridge)


def teardown(run_id: str, *, netns: list[str], veths: list[str], bridge: str | None, rules: list[list[str]]) -> list[str]:
    """Remove what a run created, in the order GOTCHAS.md requires (processes must already be gone).

    Tolerates objects that were never created or are already gone; returns what it removed.
    """
    removed = []
    present = set(list_netns())
    for name in netns:
        if name in present:
            run(["ip", "netns", "del", name], check=False)
            removed.append(f"netns {name}")
    for name in veths:  # the host end can outlive `ip netns del` while anything held the namespace
        if link_exists(name):
            run(["ip", "link", "del", name], check=False)
            removed.append(f"veth {name}")
    for rule in rules:
        while _rule_present(rule):  # a rule inserted twice needs two deletes
            run(["iptables", "-w", "-D", *rule])
            removed.append(f"iptables {' '.join(rule)}")
    if bridge and link_exists(bridge):
        run(["ip", "link", "del", bridge], check=False)
        removed.append(f"bridge {bridge}")
    remove_guard_route_if_unused()
    return removed


def _rule_present(rule: list[str]) -> bool:
    try:
        run(["iptables", "-w", "-C", *rule])
        return True
    except CommandError:
        return False


def list_netns() -> list[str]:
    return [line.split()[0] for line in run(["ip", "netns", "list"], check=False).splitlines() if line.strip()]


def leftover_rules() -> list[list[str]]:
    """Quorum's iptables rules of any run, as argument lists for -D (from iptables-save -t filter)."""
    rules = []
    for line in run(["iptables-save", "-t", "filter"], check=False).splitlines():
        if line.startswith("-A ") and "quorum:" in line:
            rules.append(shlex.split(line)[1:])
    return rules
