"""Hollow nodes on a cluster Quorum did not build: an inventory's `hollow_nodes:` (disposable targets only).

One kwok controller runs on this machine against the target's API, with the inventory's own credentials, and plays
the run's Node objects as kubelets would: it renews their Leases, reports their status and moves pods bound to them
to Running. The load suite then judges heartbeats and pod start-up on the target as on a cluster Quorum builds.

What it leaves on the cluster is Quorum's and named so:
- each node is labelled `quorum.dev/hollow=true` and with its run (RUN_LABEL), and tainted (HOLLOW_TAINT) so that the
  owner's workloads are not scheduled onto nodes that do not exist;
- each names the kwok process that plays it (OWNER, a Harness): `quorum heal --target` deletes the nodes of a kwok
  controller that no longer runs, and leaves a live one's alone.

The node's address is TEST-NET-1's 192.0.2.1 (RFC 5737), which no host has: whatever in the cluster tries the node's
kubelet API reaches nothing, never this machine or a host of someone else's. The kwok controller serves that API on
this machine's loopback only. `stop` (the run's teardown) stops kwok and deletes the nodes; the pod garbage
collector removes what the owner's DaemonSets put on them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import requests

from harness.components.kwok import HOLLOW_LABEL, configuration_for
from harness.errors import ClusterError
from harness.load.hollow import NODES_PATH, Say, create_nodes, node_object, wait_nodes_ready
from harness.monitors.work_leftovers import why_left_alone
from harness.net.loopback import free_port
from harness.run.harness_process import Harness
from harness.toolchain.install import Toolchain
from harness.wait import eventually, until

if TYPE_CHECKING:
    from harness.clients.kubeapi import ApiClient
    from harness.inventory.model import HollowNodes

FLEET_FILE = "hollow-fleet.json"  # in the run directory: what any process needs to stop the fleet
RUN_LABEL = "quorum.dev/hollow-run"  # the run whose fleet a node belongs to
OWNER = "quorum.dev/hollow-owner"  # annotation: the kwok process that plays the node (a Harness, as JSON)
NODE_IP = "192.0.2.1"  # TEST-NET-1 (RFC 5737): no host has it
# kwok's own pod network, as on the process backend: addresses only written into Pod objects, never routed
POD_CIDR = "10.213.192.0/18"
KUBELET_VERSION = "v0.0.0-quorum-kwok"  # a node that runs no kubelet names none of the cluster's releases
STARTED_S = 30.0  # kwok answers /healthz within seconds of its start; longer is a broken binary or kubeconfig
READY_MARGIN_S = 120.0  # beyond the creation time, for the last nodes to turn Ready (as harness/load/hollow.py)
STOPPED_S = 10.0  # SIGTERM to kwok's exit, then SIGKILL
DELETE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Fleet:
    """One run's hollow nodes and the kwok controller that plays them (run_dir/FLEET_FILE)."""

    run_id: str
    names: tuple[str, ...]
    kwok: Harness | None = None  # None until it started

    @property
    def player(self) -> str:
        """The HOST_LABEL value the fleet's kwok controller selects."""
        return f"run-{self.run_id}"

    @property
    def selector(self) -> str:
        """The label selector, as a URL query, of this run's nodes."""
        return f"labelSelector={HOLLOW_LABEL}%3Dtrue%2C{RUN_LABEL}%3D{self.run_id}"

    def save(self, run_dir: Path) -> None:
        (run_dir / FLEET_FILE).write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, run_dir: Path) -> "Fleet | None":
        path = run_dir / FLEET_FILE
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        kwok = Harness(**data["kwok"]) if data.get("kwok") else None
        return cls(data["run_id"], tuple(data["names"]), kwok)


def node_names(run_id: str, count: int) -> tuple[str, ...]:
    return tuple(f"hollow-{run_id}-{i:04d}" for i in range(count))


def _kwok_answers(port: int) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2.0).ok
    except requests.RequestException:
        return False


def start(api: "ApiClient", kubeconfig: Path, run_dir: Path, run_id: str, wanted: "HollowNodes",
          say: Say = lambda _: None) -> Fleet:
    """Start the kwok controller, create the nodes and wait until each has been Ready; a ClusterError naming how far
    it got otherwise (the caller's teardown then stops what started)."""
    fleet = Fleet(run_id, node_names(run_id, wanted.count))
    directory = run_dir / "hollow"
    directory.mkdir(mode=0o700, exist_ok=True)
    port = free_port()
    config = directory / "kwok.yaml"
    config.write_text(configuration_for(address="127.0.0.1", port=port, node_ip=NODE_IP, player=fleet.player,
                                        node_lease_s=wanted.node_lease_s, pod_cidr=POD_CIDR))
    log = directory / "kwok.log"
    say(f"starting a kwok controller for {wanted.count} hollow nodes (log {log})")
    with log.open("ab") as out:
        process = subprocess.Popen([str(Toolchain().path("kwok")), f"--config={config}", f"--kubeconfig={kubeconfig}",
                                    "--v=WARN"], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, cwd=directory)
    kwok = Harness.of(process.pid, f"kwok --config={config}")
    fleet = replace(fleet, kwok=kwok)
    fleet.save(run_dir)  # before anything exists on the cluster: a teardown after a crash finds it all
    if not until(lambda: process.poll() is not None or _kwok_answers(port), STARTED_S, 0.5).held \
            or process.poll() is not None:
        tail = log.read_text(errors="replace")[-600:]
        raise ClusterError(f"the kwok controller did not start (exit {process.poll()}): {tail}",
                           "quorum toolchain status shows whether kwok is installed; the kubeconfig of the "
                           "inventory must reach the API with rights to write Nodes and Leases")
    owner = {OWNER: json.dumps(asdict(kwok))}
    nodes = [node_object(name, fleet.player, KUBELET_VERSION, tainted=True, labels={RUN_LABEL: run_id},
                         annotations=owner) for name in fleet.names]
    created_s = create_nodes(api, nodes, wanted.create_rate_per_s, say)
    wait_nodes_ready(api, wanted.count, wanted.count / wanted.create_rate_per_s + READY_MARGIN_S - created_s, say,
                     fleet.selector, f"read the kwok controller's log ({log})")
    say(f"{wanted.count} hollow nodes Ready")
    return fleet


def _running(kwok: Harness) -> bool:
    """Whether the fleet's kwok controller still runs (the same process: pid and start time). Reaped first when this
    process started it: an exited child stays a zombie, with its pid and start time, until it is waited for."""
    try:
        os.waitpid(kwok.pid, os.WNOHANG)
    except ChildProcessError:
        pass  # another process's child (the teardown of `quorum down`): its parent reaps it
    return kwok.alive() is True


def _stop_kwok(kwok: Harness) -> str | None:
    """Stop the fleet's kwok controller if it still runs; what was done."""
    if not _running(kwok):
        return None
    os.kill(kwok.pid, signal.SIGTERM)
    if not eventually(lambda: not _running(kwok), STOPPED_S, 0.2):
        os.kill(kwok.pid, signal.SIGKILL)
        eventually(lambda: not _running(kwok), STOPPED_S, 0.2)
    return f"stopped the hollow nodes' kwok controller (pid {kwok.pid})"


def delete_node(api: "ApiClient", name: str) -> str | None:
    """Delete one hollow node; a problem (None when it is gone, or was already)."""
    try:
        response = api.request("DELETE", f"{NODES_PATH}/{name}", timeout=DELETE_TIMEOUT_S)
    except requests.RequestException as error:
        return f"node {name} could not be deleted: {error}"
    if response.status_code not in (200, 202, 404):
        return f"node {name} could not be deleted: HTTP {response.status_code} {response.text[:200]}"
    return None


def stop(api: "ApiClient", run_dir: Path) -> tuple[list[str], list[str]]:
    """The run's teardown: kwok stopped, then every node of the run deleted; (what was done, what failed). The
    fleet's record goes only when nothing failed, so a second teardown tries again."""
    fleet = Fleet.load(run_dir)
    if fleet is None:
        return [], []
    done = [said for said in [_stop_kwok(fleet.kwok)] if said] if fleet.kwok else []
    failed = [problem for problem in (delete_node(api, name) for name in fleet.names) if problem]
    if not failed:
        done.append(f"deleted {len(fleet.names)} hollow nodes of run {fleet.run_id}")
        (run_dir / FLEET_FILE).unlink(missing_ok=True)
    return done, failed


def kwok_of(node: dict) -> Harness | None:
    """The kwok process a hollow node's annotation names; None when it names none Quorum can read."""
    text = node.get("metadata", {}).get("annotations", {}).get(OWNER)
    try:
        return Harness(**json.loads(text)) if text else None
    except (ValueError, TypeError):
        return None


@dataclass
class FleetLeftovers:
    deleted: list[str]
    left_alone: list[str]
    failed: list[str]


def sweep(api: "ApiClient", force: bool = False) -> FleetLeftovers:
    """`quorum heal --target`: the hollow nodes whose kwok controller no longer runs, deleted; a live one's left
    alone, and one from another machine (or naming no process) only with --force."""
    leftovers = FleetLeftovers([], [], [])
    try:
        response = api.request("GET", f"{NODES_PATH}?labelSelector={HOLLOW_LABEL}%3Dtrue%2C{RUN_LABEL}",
                               timeout=DELETE_TIMEOUT_S)
        response.raise_for_status()
        items = response.json().get("items", [])
    except (requests.RequestException, ValueError) as error:
        leftovers.failed.append(f"the hollow nodes could not be listed: {error} (the next heal tries again)")
        return leftovers
    kept: dict[str, list[str]] = {}  # why a kwok controller's nodes stay -> their names
    for node in items:
        name = node["metadata"]["name"]
        reason = why_left_alone(kwok_of(node), force)  # the work monitors' rule: a live or unknown owner's stay
        if reason:
            kept.setdefault(reason, []).append(name)
            continue
        problem = delete_node(api, name)
        if problem:
            leftovers.failed.append(problem)
        else:
            leftovers.deleted.append(f"deleted hollow node {name} (its kwok controller is gone)")
    for reason, names in kept.items():
        leftovers.left_alone.append(f"{len(names)} hollow nodes (e.g. {names[0]}): their kwok controller {reason}")
    return leftovers
