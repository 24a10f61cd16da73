"""Whole kind nodes powered on again, or power-cycled together.

Like a machine, a node must come back with its address: etcd keeps its peers' URLs in its data, so a kind cluster
with several control planes does not survive its nodes trading addresses. Docker gives a started container the
lowest free address of the network (measured on Docker 20.10), so the nodes are started in the order of their
addresses, which are kept in the run directory before any node goes down (a stopped container has none in
Docker's record); a node that still gets another address is a harness error, said as such."""

from __future__ import annotations

import ipaddress
import json
from typing import TYPE_CHECKING

from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.errors import FaultError
from harness.target.power import Power

if TYPE_CHECKING:
    from harness.backends.kind.target import KindTarget


def _start_in_address_order(target, addresses: dict[str, str | None]) -> None:
    order = sorted(addresses, key=lambda node: ipaddress.ip_address(addresses[node] or "0.0.0.0"))
    client().container.start([target.container(node) for node in order])
    moved = {node: (old, target.address(node)) for node, old in addresses.items() if target.address(node) != old}
    if moved:
        raise FaultError(f"restarted kind nodes came back with other addresses: {moved} (old, new)",
                         "another container took a node's address while it was down; quorum down and up again")


def addresses(target) -> dict[str, str]:
    """Every node's address on the run's network, as first seen with all of them running (run_dir/node-addresses.json).
    The file names the kind cluster it was seen on: a run directory outlives its cluster (`quorum down`, then `up`
    builds a new one there), and the previous cluster's addresses would start the new nodes in the wrong order."""
    path = target.run_dir / "node-addresses.json"
    try:  # a file cut short or of an older layout is no record of this cluster: seen again, now
        saved = json.loads(path.read_text()) if path.exists() else {}
        known = dict(saved["nodes"]) if saved.get("cluster") == target.kind_name else {}
    except (ValueError, KeyError, TypeError, AttributeError):
        known = {}
    missing = [node for node in target.hosts() if node not in known]
    if missing:
        known |= {node: address for node in missing if (address := target.address(node)) is not None}
        path.write_text(json.dumps({"cluster": target.kind_name, "nodes": known}, indent=1))
    return known


class NodePower(Power):
    """kind's node containers as machines: `docker kill`, `docker pause`, and started again in address order. A
    node's interface is kind's to manage (its network is the cluster's only one), so there is no disconnect."""

    target: "KindTarget"

    def off(self, hosts: list[str]) -> None:
        addresses(self.target)
        client().container.kill([self.target.container(node) for node in hosts])

    def on(self, hosts: list[str]) -> None:
        """Unpause paused nodes and start stopped ones, in the order of their addresses."""
        docker, known, stopped = client(), addresses(self.target), {}
        for node in hosts:
            name = self.target.container(node)
            try:
                state = docker.container.inspect(name).state
                if state.paused:
                    docker.container.unpause(name)
                if not state.running:
                    stopped[node] = known.get(node)
            except DockerException as error:
                raise FaultError(f"could not bring kind node {node} back: {error}", f"docker start {name}") from None
        if stopped:
            _start_in_address_order(self.target, stopped)

    def cycle(self, hosts: list[str]) -> None:
        """`docker kill` every node at once, then start them all again: what comes back is what they have on disk."""
        known = addresses(self.target)
        client().container.kill([self.target.container(node) for node in hosts])
        _start_in_address_order(self.target, {node: known.get(node) for node in hosts})

    def freeze(self, host: str) -> None:
        client().container.pause(self.target.container(host))
