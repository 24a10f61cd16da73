"""A kind cluster as a Target: its node containers are the hosts (by kind's short names: control-plane,
control-plane2, worker, ...), its API is reached through kind's load balancer with the admin credentials kind
wrote, and its control plane is kubeadm's static pods (harness/backends/kind/static_pods.py), which the kubelet,
not Quorum's supervisor, keeps running."""

from __future__ import annotations

import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

import requests
from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.backends.kind import nodes, self_hosted, static_pods
from harness.backends.kind.clients import APISERVER_PORT, KindClients
from harness.backends.kind.health import KindHealth
from harness.backends.kind.cluster import cluster_name
from harness.backends.kind.power import NodePower
from harness.backends.kind.static_pods import ETCD_CLIENT_PORT
from harness.backends.kind.topology import KindTopology, load_kind_topology
from harness.clients.kubeapi import PodRestarts
from harness.components.flags import parse_flags
from harness.components import runtime
from harness.components.static_pod_keeper import StaticPodKeeper
from harness.errors import ClusterError
from harness.run.state import RunState
from harness.target.capabilities import Capability
from harness.target.hosts import Ran
from harness.target.protocol import HostRole, Target, Unsupported, component_name
from harness.thresholds import (KIND_LB_FALL, KIND_LB_INTERVAL_S, KIND_LB_TIMEOUT_S, kind_partition_recovery_s,
                                kind_whole_cluster_after_s)
from harness.topology import Component, HealthCheck, unowned_address

ROLES = {HostRole.CONTROLLER: "control-plane", HostRole.ETCD: "control-plane", HostRole.WORKER: "worker"}
class KindTarget(KindClients, Target):
    BACKEND_NAME = "kind"
    topology: KindTopology
    health_poll_s = 0.5  # each check is a docker exec or a request into the node
    poll_interval_s = 2.0
    # the kubelet's back-offs and timers, not a supervisor, bring it back: the longest recovery a scenario allows (a
    # control-plane node whose apiserver was away, back to Ready), thresholds.kind_whole_cluster_after_s
    settle_s = kind_whole_cluster_after_s(kind_partition_recovery_s())

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.state = RunState.load(self.run_dir)
        self.topology = load_kind_topology(self.run_dir / "topology.yaml")
        self._roles: dict[str, str] | None = None  # the node list, once every node is there (_node_roles)

    KEEPERS = (StaticPodKeeper, self_hosted.SelfHostedKeeper)
    CAPABILITIES = frozenset({Capability.PODS, Capability.NODES})
    POWER = NodePower
    HEALTH = KindHealth

    def bootstrap_apiserver(self) -> AbstractContextManager[None]:
        if not self.topology.kind.self_hosted:
            raise Unsupported(f"{self.name}'s apiservers are kubeadm's static pods: there is no bootstrap apiserver "
                              "to bring back", "use a topology with kind.self_hosted: true")
        return self_hosted.bootstrap_apiserver(self)

    # ---- identity ------------------------------------------------------------------------------

    @property
    def kind_name(self) -> str:
        return cluster_name(self.run_id)

    def container(self, host: str) -> str:
        """A node's container (and Kubernetes node) name from its short name (kind's own naming)."""
        return f"{self.kind_name}-{host}"

    def hosts(self, role: str | None = None) -> list[str]:
        if role is not None and role not in ROLES:
            return []  # kind's load balancer is not a node: nothing runs on it that Quorum faults
        return sorted(name for name, node_role in self._node_roles().items()
                      if node_role in ("control-plane", "worker") and (role is None or node_role == ROLES[role]))

    def _node_roles(self) -> dict[str, str]:
        """Kept once every node is there: Quorum adds or removes no kind node in a run (a rebuild reloads the target)."""
        if self._roles is not None:
            return self._roles
        roles = nodes.roles(self.kind_name)
        if sum(role in ("control-plane", "worker") for role in roles.values()) == self.topology.kind.nodes:
            self._roles = roles
        return roles

    def component_hosts(self, component: Component | str) -> list[str]:
        """Every control-plane node runs the whole control plane as static pods."""
        return self.hosts(HostRole.CONTROLLER) if component_name(component) in static_pods.STATIC_PODS else []

    # ---- commands and files ----------------------------------------------------------------------

    def run(self, host: str, argv: list[str], *, timeout: float = 60.0) -> Ran:
        try:
            return Ran(tuple(argv), 0, client().container.execute(self.container(host), argv) or "", "")
        except DockerException as error:  # the command's own failure, or the node's (gone, stopped)
            return Ran(tuple(argv), error.return_code or 1, error.stdout or "", error.stderr or str(error))

    def command_failed(self, host: str, ran: Ran) -> ClusterError:
        return ClusterError(f"{' '.join(ran.argv[:3])} in node {host} failed (exit {ran.rc}): {ran.stderr[-500:]}",
                            "docker ps -a shows the cluster's nodes; quorum down removes them")

    def put_file(self, host: str, path: str, text: str) -> None:
        self.replace_file(self.container(host), path, text)

    def replace_file(self, container: str, path: str, text: str) -> None:
        """Replace a file in one of the cluster's containers (a node, or the load balancer) atomically."""
        directory, name = path.rsplit("/", 1)
        hidden = f"{directory}/.{name}.quorum"
        with tempfile.TemporaryDirectory(prefix="quorum-replace-") as local_directory:
            local = Path(local_directory) / name
            local.write_text(text)
            client().container.copy(local, (container, hidden))
        client().container.execute(container, ["mv", "-f", hidden, path])

    # ---- pods' containers, as the node's containerd runs them ------------------------------------

    def pod_containers(self, host: str, namespace: str, container: str) -> list[str]:
        return runtime.running(self, host, namespace, container)

    def kill_pod_container(self, host: str, container_id: str) -> None:
        runtime.kill(self, host, container_id)

    # ---- components (static pods) ----------------------------------------------------------------

    def pid(self, component: Component | str, host: str) -> int | None:
        """The oldest process named like the static pod's in the node (whose pid namespace holds every container's)."""
        found = self.exec(host, ["pgrep", "-o", "-x", static_pods.process_name(component_name(component))],
                          check=False).strip()
        return int(found) if found.isdigit() else None

    def signal(self, component: Component | str, host: str, signal: str, *, pid: int | None = None) -> None:
        name = static_pods.signal_name(signal)
        if pid is not None:
            self.exec(host, ["kill", f"-{name}", str(int(pid))], check=False)
        else:
            self.exec(host, ["pkill", f"-{name}", "-x", static_pods.process_name(component_name(component))],
                      check=False)

    def keeper(self, component: Component | str) -> StaticPodKeeper:
        """The node's kubelet, running kubeadm's manifest (a self-hosted component's pod is its workload's, whose
        manifest Quorum cannot move: harness/backends/kind/self_hosted.py)."""
        name = Component(static_pods.checked(component_name(component)))
        kept_by = self_hosted.SelfHostedKeeper if self_hosted.is_self_hosted(self, name.value) else StaticPodKeeper
        return kept_by(self, static_pods.KIND, name, lambda host: self._pod_restarts(name, host), self.container)

    def live_flags(self, component: Component | str) -> dict[str, dict[str, str]]:
        flags = {}
        name = static_pods.process_name(component_name(component))
        for node in self.hosts(HostRole.CONTROLLER):
            script = f"pid=$(pgrep -o -x {name}) && tr '\\0' '\\n' < /proc/$pid/cmdline"
            argv = self.exec(node, ["sh", "-c", script], check=False).splitlines()
            if not argv:
                raise ClusterError(f"{component_name(component)} is not running in kind node {node}",
                                   f"quorum status {self.run_dir} shows the nodes and their static pods")
            flags[node] = parse_flags(argv[1:])
        return flags

    def apiserver_ready(self, host: str, timeout: float = 1.0, address: str | None = None) -> bool:
        """kube-apiserver in `host` answers /readyz directly (not through the load balancer); `address`: the node's,
        if the caller read it already."""
        address = address or self.address(host)
        if address is None:
            return False
        try:
            return self.api.session.get(f"https://{address}:{APISERVER_PORT}/readyz", timeout=timeout).status_code == 200
        except requests.RequestException:
            return False

    def _pod_restarts(self, component: Component | str, host: str) -> PodRestarts:
        name = component_name(component)
        pod = (self_hosted.pod_restarts(self, name, host)
               if self.topology.kind.self_hosted and name in self_hosted.SELF_HOSTED
               else self.api.mirror_pod(name, self.container(host)))
        if pod is None:
            raise ClusterError(f"no mirror pod for {name} in kind node {host}",
                               f"quorum status {self.run_dir} shows the nodes and their static pods")
        return pod

    # ---- what the configuration promises: the kubelet's static-pod recovery ----------------------------

    def load_balancer_check(self) -> HealthCheck | None:
        """kind's Envoy health check (copied by the HAProxy stand-in) on the topology's path, unless a twin removed
        it."""
        if self.topology.defects.lb_without_health_checks:
            return None
        balancer = self.topology.load_balancer
        return HealthCheck(path=balancer.health_check_path, interval_s=KIND_LB_INTERVAL_S, timeout_s=KIND_LB_TIMEOUT_S,
                           fall=KIND_LB_FALL, rise=1, shutdown_sessions=balancer.close_connections_on_failure)

    # ---- network and nodes ---------------------------------------------------------------------

    def address(self, host: str) -> str | None:
        """The node's address on the run's network (None while the container is stopped)."""
        networks = client().container.inspect(self.container(host)).network_settings.networks or {}
        endpoint = networks.get(self.state.docker_network or "")
        return (endpoint.ip_address or None) if endpoint else None

    def unanswered_etcd_url(self) -> str:
        """An address of the run's own Docker network that no node has (the common mistake: an address that does
        not answer), on etcd's client port."""
        taken = {address for address in self.addresses(self.hosts()).values() if address}
        return f"https://{unowned_address(self.topology.network.subnet, taken)}:{ETCD_CLIENT_PORT}"

    def addresses(self, hosts: list[str]) -> dict[str, str | None]:
        """address() of each host, in one `docker container inspect` of them all (the health check's many)."""
        found = nodes.addresses([self.container(host) for host in hosts], self.state.docker_network or "")
        return dict(zip(hosts, found)) if found is not None else {host: self.address(host) for host in hosts}

    def link(self, host: str) -> str:
        return "eth0"  # kind's nodes have one interface on the cluster network

    def baseline_link_mbit(self, host: str) -> float | None:
        """kind's nodes have unshaped links, but a twin's throttled workers (its defect stays)."""
        if self.topology.defects.worker_link_mbit and host in self.hosts(HostRole.WORKER):
            return float(self.topology.defects.worker_link_mbit)
        return None

    # ---- what faults leave -----------------------------------------------------------------------

    def sweep(self, keep: frozenset[str] = frozenset()) -> list[str]:
        """Every held manifest back, every crash loop ended, every overridden manifest restored, on every node (no
        fault on kind leaves a static pod unsafe to restore: `keep` is never given here)."""
        done = []
        for node in self.hosts(HostRole.CONTROLLER):
            try:
                for component in static_pods.STATIC_PODS:
                    done += self.keeper(component).sweep(node)
            except ClusterError:
                done.append(f"could not look for held manifests in {node} (not running?): quorum heal again once it runs")
        return done
