"""Leftovers of runs this machine no longer knows, reclaimed when a new run needs their subnet.

The registry of live runs (/run/quorum/runs) is on tmpfs, but the Docker engine keeps its networks on disk and
restores them, with their bridges, when it starts again: after a reboot a run that was killed mid-test leaves a
`qd-<run id>` bridge holding its subnet, and no registered run that `quorum down` could name. Without this, every
later run on that subnet fails with "already in use" until someone removes the Docker network by hand.

A bridge is an orphan only when its run is not registered: every backend registers a run before it creates its
network, so a run that is starting or running on this machine is never taken for one.
"""

from __future__ import annotations

import ipaddress
import json

from harness.backends import registry
from harness.net import netns
from harness.run.state import registered_runs
from harness.shell import run


def orphan_bridges(subnet: ipaddress.IPv4Network) -> dict[str, str]:
    """bridge -> run id, for Quorum bridges with an address in `subnet` whose run is not registered here."""
    live = set(registered_runs())
    found = {}
    for link in json.loads(run(["ip", "-j", "-4", "addr"]) or "[]"):
        name = link["ifname"]
        prefix = next((p for p in netns.BRIDGE_PREFIXES if name.startswith(p)), None)
        in_subnet = any(ipaddress.ip_address(info["local"]) in subnet for info in link.get("addr_info", []))
        if prefix and in_subnet and name[len(prefix):] not in live:
            found[name] = name[len(prefix):]
    return found


def reclaim(subnet: ipaddress.IPv4Network) -> list[str]:
    """Remove orphaned runs' bridges in `subnet` (and, for Docker's, the run's containers and network first).
    The caller holds the network lock."""
    removed = []
    for bridge, run_id in orphan_bridges(subnet).items():
        if bridge.startswith(netns.PREFIX_DOCKER_BRIDGE):  # Docker would bring its network's bridge back
            removed += registry.reclaim(run_id)
        if netns.link_exists(bridge):  # a process run's bridge, or a Docker bridge the engine did not remove
            run(["ip", "link", "del", bridge], check=False)
            removed.append(f"bridge {bridge}")
    return removed
