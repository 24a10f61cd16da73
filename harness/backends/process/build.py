"""Building a cluster whose components run under Quorum's supervisor, on hosts that a `Hosts` strategy makes:
network namespaces (this backend) or containers (the docker backend, which passes its own).

`build` returns a target only when the control plane is really usable: /readyz through the load balancer
answers 200, every component is healthy, both leader leases have a holder and the LB marks every apiserver UP.
Otherwise it tears down what it started and raises a ClusterError carrying the log lines that explain.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from harness.backends import orphans
from harness.backends.common import default_run_dir, error_lines, require_root, start_run
from harness.backends.process import defects
from harness.backends.process.keepers import start_keepers, write_keeper
from harness.backends.process.target import ProcessTarget, layout_for
from harness.components import ComponentSpec, binaries_for, specs_for
from harness.components.flags import unknown_extra_flags
from harness.errors import ClusterError, ToolchainError, TopologyError
from harness.load import hollow
from harness.net import netns
from harness.pki import write_kubeconfig
from harness.run.state import RunState
from harness.topology import Topology, load_topology
from harness.wait import until

READY_TIMEOUT_S = 120.0

Say = Callable[[str], None]


class Hosts(ABC):
    """Where a supervised cluster's hosts come from. `create` makes the hosts and their network (journaling each
    object in the run state before it exists); `start` starts every host's keepers."""

    in_containers = False  # a container's own command starts its keepers, in its namespaces

    def __init__(self, state: RunState) -> None:
        self.state = state

    @abstractmethod
    def create(self, topology: Topology, say: Say) -> None: ...

    @abstractmethod
    def start(self, topology: Topology, run_dir: Path, specs: list[ComponentSpec]) -> None: ...


class NamespaceHosts(Hosts):
    """Each host a network namespace on the run's bridge; each keeper started here, entering its namespace."""

    def create(self, topology: Topology, say: Say) -> None:
        say(f"network {topology.network.subnet} on bridge {netns.bridge_name(self.state.run_id)}")
        network = netns.RunNetwork(self.state.run_id, topology.network.subnet, self.state.record, orphans.reclaim)
        network.create([(h.name, topology.address_of(h)) for h in topology.hosts], topology.network.link_rate_mbit)

    def start(self, topology: Topology, run_dir: Path, specs: list[ComponentSpec]) -> None:
        start_keepers(run_dir, specs)


def build(topology_file: Path, run_dir: Path | None, say: Say, timeout_s: float | None, *, backend: str,
          hosts: Callable[[RunState], Hosts], target: type[ProcessTarget]) -> ProcessTarget:
    from harness.backends import registry  # the registry names this module's backend: down() goes through it

    require_root("up")
    topology = load_topology(topology_file)
    run_dir = (run_dir or default_run_dir(topology.name)).resolve()
    layout = layout_for(topology, run_dir)
    _require_binaries(layout, binaries_for(topology))
    _require_known_flags(topology, layout)
    specs = specs_for(layout)
    started = time.monotonic()
    state = start_run(topology_file, run_dir, topology.name, backend, [spec.id for spec in specs])
    tell = lambda line: say(f"run {state.run_id}: {line}")  # noqa: E731
    try:
        tell("PKI")
        _write_pki(topology, layout)
        defects.after_pki(topology, layout)
        maker = hosts(state)
        refusal = defects.not_in_containers(topology) if maker.in_containers else None
        if refusal:
            raise ClusterError(refusal, "build this twin with --backend process")
        maker.create(topology, tell)
        if not maker.in_containers:
            defects.after_network(topology, state.run_id)
        tell(f"starting {len(specs)} components")
        for spec in specs:
            write_keeper(run_dir, state, spec, in_container=maker.in_containers, cluster_topology=topology)
        maker.start(topology, run_dir, specs)
        if maker.in_containers:
            defects.after_network(topology, state.run_id)
        cluster = target(run_dir)
        _wait_ready(cluster, timeout_s or READY_TIMEOUT_S)
        defects.after_ready(topology, cluster)
        if topology.hollow_nodes.count:
            figures = hollow.realise(cluster.api, topology, tell)
            (run_dir / "hollow.json").write_text(json.dumps(asdict(figures)))
        defects.after_up(topology, cluster, state.run_id)
    except BaseException as error:
        explanation = _explain_failure(run_dir, specs) if isinstance(error, ClusterError) else ""
        tell("start-up failed, tearing down")
        registry.down(run_dir, keep_logs=True)
        if isinstance(error, ClusterError) and explanation:
            raise ClusterError(f"{error.problem}\n{explanation}", error.fix) from None
        raise
    state.status = "ready"
    state.save()
    tell(f"ready in {time.monotonic() - started:.1f}s")
    return cluster


def _require_binaries(layout, names: list[str]) -> None:
    """Every binary the topology runs, or one ToolchainError naming all that are missing and the command."""
    missing = []
    for name in names:
        try:
            layout.binary(name)
        except ToolchainError as error:
            missing.append(error)
    if missing:
        fix = max((e.fix for e in missing), key=len)  # the one with --kubernetes, if a Kubernetes binary is missing
        raise ToolchainError("; ".join(e.problem for e in missing), fix)


def _require_known_flags(topology: Topology, layout) -> None:
    """Every extra flag is one the built binary takes: refused before anything starts, not found later as a
    crash-looping component."""
    for binary, flags in (("kube-apiserver", topology.apiserver.extra_flags),
                          ("kube-controller-manager", topology.controller_manager.extra_flags)):
        unknown = unknown_extra_flags(layout.binary(binary), flags) if flags else []
        if unknown:
            raise TopologyError(f"{binary} {topology.kubernetes} takes no {', '.join(unknown)} (its --help lists "
                                "every flag it takes)", f"fix the extra_flags of {binary} in the topology")


def _write_pki(topology: Topology, layout) -> None:
    pki = layout.pki
    pki.generate(topology)
    write_kubeconfig(layout.admin_kubeconfig, server=topology.api_endpoint, ca=pki.ca.cert, client=pki.client("admin"),
                     user="admin", cluster=topology.name)
    for host in topology.controllers + topology.spares:  # a spare's kubeconfigs are ready for when it joins
        local = f"https://{topology.address_of(host)}:{topology.apiserver.port}"
        for who in ("controller-manager", "scheduler"):
            write_kubeconfig(layout.kubeconfig(host.name, who), server=local, ca=pki.ca.cert, client=pki.client(who),
                             user=f"system:kube-{who}", cluster=topology.name)
    for host in topology.node_hosts if topology.hollow_nodes.count else []:
        # through the load balancer, like a kubelet: losing one apiserver must not make nodes NotReady
        write_kubeconfig(layout.kubeconfig(host.name, "kwok"), server=topology.api_endpoint, ca=pki.ca.cert,
                         client=pki.client("kwok"), user="quorum-kwok", cluster=topology.name)


def _wait_ready(cluster: ProcessTarget, timeout_s: float) -> None:
    topology = cluster.topology
    want_leases = topology.leader_election.enabled
    pending: list[str] = []

    def ready() -> bool:
        nonlocal pending
        events = cluster.events()
        dead = [cid for cid, spec in cluster.specs.items() if spec.restart.policy == "never"
                and any(e["component"] == cid and e["event"] == "exit" for e in events)]
        if dead:  # nothing will bring it back: fail now rather than at the timeout
            raise ClusterError(f"{', '.join(dead)} exited during start-up and its restart policy is never",
                               "read the log lines below")
        health = cluster.health.component_health(timeout=0.5)
        pending = [cid for cid, ok in health.items() if not ok]
        if pending or not cluster.api.ready():
            return False
        holders = cluster.health.lease_holders() if want_leases else {}
        unheld = [name for name, host in holders.items() if host is None]
        # every apiserver in rotation: /readyz through the LB answers as soon as one is, and a scenario that
        # starts while the LB still counts another's rise checks misjudges it (one rose for 30 s)
        pending = [f"lease {name}" for name in unheld] + cluster.health.lb_problems()
        return not pending

    if until(ready, timeout_s, 0.2).held:
        return
    raise ClusterError(
        f"cluster {topology.name} not ready after {timeout_s:.0f}s; still waiting for: {', '.join(pending) or '/readyz via LB'}",
        "read the component log lines below; `quorum logs COMPONENT@HOST` after a failed start shows whole logs",
    )


def _explain_failure(run_dir: Path, specs: list[ComponentSpec], lines: int = 6) -> str:
    """The last lines of each component's log that look like errors."""
    parts = []
    for spec in specs:
        log = run_dir / "logs" / f"{spec.id}.log"
        if not log.exists():
            continue
        bad = error_lines(log.read_text(errors="replace"), lines)
        if bad:
            parts.append(f"  {spec.id}:\n" + "\n".join(f"    {line[:300]}" for line in bad))
    return "component logs:\n" + "\n".join(parts) if parts else ""
