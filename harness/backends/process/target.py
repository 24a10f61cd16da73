"""A running cluster, as the harness sees it: loaded from its run directory by any process."""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path

from harness.net.netns import assert_local, host_link, netns_name
from harness.components import ComponentSpec, Layout, specs_for
from harness.components import etcd as etcd_component
from harness.components import haproxy as haproxy_component
from harness.clients.etcdapi import EtcdClient, EtcdCredentials
from harness.errors import ClusterError
from harness.components.flags import parse_flags
from harness.clients.health import probe
from harness.clients.kubeapi import ApiClient
from harness.clients.haproxy_admin import server_states
from harness.target.handle import RunHandle
from harness.shell import in_netns, run
from harness.run.state import RunState
from harness.backends.process.supervisor import Control
from harness.toolchain.install import Toolchain
from harness.topology import Component, Topology, load_topology

LEASES = {Component.CONTROLLER_MANAGER: "kube-controller-manager", Component.SCHEDULER: "kube-scheduler"}


def layout_for(topology: Topology, run_dir: Path) -> Layout:
    toolchain = Toolchain(topology.kubernetes)
    return Layout(topology, run_dir, toolchain.path)


class Cluster(RunHandle):
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.state = RunState.load(self.run_dir)
        self.topology = load_topology(self.run_dir / "topology.yaml")
        self.layout = layout_for(self.topology, self.run_dir)

    def reload(self) -> "Cluster":
        """Re-read the run directory (after a rebuild the run id and state change)."""
        self.__init__(self.run_dir)  # type: ignore[misc]
        for cached in ("specs", "api", "etcd"):
            self.__dict__.pop(cached, None)
        return self

    def problems(self) -> list[str]:
        """What is unhealthy right now (empty when every component, the LB and the leases are fine)."""
        found = [f"{cid} unhealthy" for cid, ok in self.component_health().items() if not ok]
        if not self.api.ready():
            found.append("/readyz via the load balancer")
        if self.topology.leader_election.enabled:
            found += [f"lease {name} unheld" for name, host in self.lease_holders().items() if host is None]
        return found + self.lb_problems()

    def lb_problems(self) -> list[str]:
        """Apiservers the load balancer does not (yet) mark UP. An apiserver can answer its own /readyz while
        the LB still counts its rise checks, or still routes to it while it restarts (a restart shorter than
        fall x inter); a test that starts then meets the stale routing (seen after a heal restarted every
        apiserver: anonymous /readyz through the LB got 403 and TLS EOFs)."""
        if self.topology.load_balancer_host is None or not self.topology.load_balancer.health_check.enabled:
            return []  # without health checks HAProxy reports "no check": nothing to wait for
        try:
            states = self.lb_server_states()
        except ClusterError as error:
            return [f"load balancer state unreadable: {error}"]
        return [f"load balancer marks {server} {state}" for server, state in states.items() if state != "UP"]

    @cached_property
    def specs(self) -> dict[str, ComponentSpec]:
        return {spec.id: spec for spec in specs_for(self.layout)}

    def spec(self, component: Component | str, host: str) -> ComponentSpec:
        value = component.value if isinstance(component, Component) else component
        return self.specs[f"{value}@{host}"]

    def control_dir(self, component_id: str) -> Path:
        return self.run_dir / "components" / component_id

    def control(self, component_id: str) -> Control:
        if component_id not in self.specs:
            raise KeyError(f"no component {component_id!r}; components: {', '.join(self.specs)}")
        return Control(self.control_dir(component_id))

    @property
    def events_path(self) -> Path:
        return self.run_dir / "events.jsonl"

    def log_path(self, component_id: str) -> Path:
        return self.run_dir / "logs" / f"{component_id}.log"

    def netns(self, host: str) -> str:
        return netns_name(self.run_id, host)

    def link(self, host: str) -> str:
        """The host's network interface (what network faults shape and filter)."""
        return host_link(self.netns(host))

    # ---- processes -----------------------------------------------------------------------------

    def _read_pid(self, path: Path) -> int | None:
        try:
            pid = int(path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return pid if Path(f"/proc/{pid}").exists() else None

    def pid(self, component_id: str) -> int | None:
        """The running component's pid (None while it is down)."""
        return self._read_pid(self.control_dir(component_id) / "child.pid")

    def live_flags(self, component: Component) -> dict[str, dict[str, str]]:
        """Host -> the flags of `component` running there, from its live command line."""
        flags = {}
        for spec in self.specs.values():
            if spec.component is not component:
                continue
            pid = self.pid(spec.id)
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[1:] if pid else None
            except FileNotFoundError:
                argv = None
            if argv is None:
                raise ClusterError(f"{spec.id} is not running", f"quorum status {self.run_dir} shows the components")
            flags[spec.host] = parse_flags(argv)
        return flags

    @property
    def apiserver_hosts(self) -> list[str]:
        return [h.name for h in self.topology.controllers]

    def keeper_pid(self, component_id: str) -> int | None:
        return self._read_pid(self.control_dir(component_id) / "keeper.pid")

    def events(self) -> list[dict]:
        if not self.events_path.exists():
            return []
        return [json.loads(line) for line in self.events_path.read_text().splitlines() if line.strip()]

    def restarts(self, component_id: str) -> int:
        return sum(1 for e in self.events() if e["component"] == component_id and e["event"] == "restart")

    def exec(self, host: str, argv: list[str], *, check: bool = True, timeout: float = 60.0) -> str:
        """Run a command inside a host (its network namespace)."""
        return run(in_netns(self.netns(host), argv), check=check, timeout=timeout)

    # ---- endpoints -----------------------------------------------------------------------------

    def ensure_local(self) -> None:
        """Every host address routes to this run's bridge (checked before monitors send traffic)."""
        for host in self.topology.hosts:
            assert_local(str(self.topology.address_of(host)), self.state.bridge or "")

    @property
    def api_endpoint(self) -> str:
        return self.topology.api_endpoint

    @cached_property
    def api(self) -> ApiClient:
        """The API through the load balancer, as the admin."""
        return ApiClient(self.api_endpoint, str(self.layout.pki.ca.cert), self.layout.pki.client("admin"))

    def apiserver(self, host: str) -> ApiClient:
        """One apiserver directly, bypassing the load balancer."""
        spec = self.spec(Component.APISERVER, host)
        return ApiClient(f"https://{spec.health.address}:{spec.health.port}", str(self.layout.pki.ca.cert),
                         self.layout.pki.client("admin"))

    @property
    def etcd_urls(self) -> list[str]:
        return etcd_component.client_urls(self.topology)

    @property
    def etcd_host_names(self) -> list[str]:
        """The hosts that run an etcd member."""
        return [h.name for h in self.topology.etcd_hosts]

    def etcd_url(self, host: str) -> str:
        """The client URL of the etcd member on `host`."""
        return etcd_component.client_url(self.topology, self.topology.host(host))

    @property
    def etcd_credentials(self) -> EtcdCredentials | None:
        """The harness's etcd client certificate (None when the topology's etcd takes plain-text clients)."""
        if not self.topology.etcd.tls:
            return None
        return EtcdCredentials(self.layout.pki.etcd_ca.cert, self.layout.pki.etcd_client("quorum-client"))

    @cached_property
    def etcd(self) -> EtcdClient:
        credentials = self.etcd_credentials
        return EtcdClient(self.etcd_urls, str(credentials.ca) if credentials else None,
                          credentials.client if credentials else None)

    @property
    def admin_kubeconfig(self) -> Path:
        return self.layout.admin_kubeconfig

    # ---- health --------------------------------------------------------------------------------

    def component_health(self, timeout: float = 1.0) -> dict[str, bool]:
        return {cid: probe(spec.health, timeout) for cid, spec in self.specs.items()}

    def lb_server_states(self) -> dict[str, str]:
        """Apiserver host -> the load balancer's status for it (UP, DOWN, "UP 1/3", ...)."""
        lb = self.topology.load_balancer_host
        if lb is None:
            raise ClusterError(f"topology {self.topology.name} has no load balancer host",
                               "add a host with roles: [loadbalancer] (clusters/ha3.yaml has one)")
        return server_states(haproxy_component.admin_socket(self.layout, lb))

    def lease_holders(self) -> dict[str, str | None]:
        """Lease name -> host holding it (None if unheld or unreadable)."""
        holders = {}
        for name in LEASES.values():
            holder = self.api.lease_holder(name)
            holders[name] = self.lease_host(holder.identity) if holder else None
        return holders

    def lease_host(self, identity: str) -> str:
        """The topology host of a lease holder: identities are '<hostname>_<uuid>', and the supervisor names
        each host's UTS namespace after it."""
        return identity.split("_", 1)[0]

    def kubectl(self, *args: str, timeout: float = 30.0) -> str:
        return run([str(self.layout.binary("kubectl")), f"--kubeconfig={self.admin_kubeconfig}", *args], timeout=timeout)


def open_cluster(run_dir: Path) -> Cluster:
    """The harness's view of a run: a KindCluster for a kind run (same interface for the History, the Nemesis
    and the API monitors), else a Cluster."""
    if RunState.load(Path(run_dir).resolve()).backend == "kind":
        from harness.backends.kind.handle import KindCluster

        return KindCluster(run_dir)  # type: ignore[return-value]
    return Cluster(run_dir)


def environment_for_keepers() -> dict[str, str]:
    """Keepers run `python -m harness.backends.process.supervisor`; make sure they import this harness."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
