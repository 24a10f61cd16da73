"""Topology files (clusters/*.yaml): a validated model of the cluster to build. No I/O beyond reading the file.
Validation happens before anything starts; every problem names the field and the fix."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from harness.errors import QuorumError, TopologyError
from harness.userfile import read_yaml
from harness.validation import HealthPath, SchedulerName, TopologyHostName, TopologyName, checked_flags
from harness.toolchain.versions import KUBERNETES_DEFAULT, kubernetes_version
from harness.topology.base import QUORUM_RANGE, Component, FixedPort, Role, Strict
from harness.topology.parts import Defects, HollowNodes, RestartPolicy, UpgradeStrategy

__all__ = ["QUORUM_RANGE", "Component", "Role", "Strict", "Defects", "HollowNodes", "RestartPolicy",
           "UpgradeStrategy", "Topology", "load_topology", "parse_topology"]


class Host(Strict):
    name: TopologyHostName = Field(description="short DNS-style name (used in interface names)")
    roles: list[Role] = Field(min_length=1)
    address: ipaddress.IPv4Address | None = None
    # set by a scale-down (harness/faults/scale.py) in the run's copy: the controller is leaving, so no apiserver is
    # configured to use its etcd member any more, and the load balancer's entry for it is disabled
    retiring: bool = False


class Network(Strict):
    subnet: ipaddress.IPv4Network = ipaddress.IPv4Network("10.213.3.0/24")
    link_rate_mbit: float | None = Field(None, gt=0, description="shape every host's link (tbf), a slow network")

    @field_validator("subnet")
    @classmethod
    def inside_quorum_range(cls, subnet: ipaddress.IPv4Network) -> ipaddress.IPv4Network:
        if not subnet.subnet_of(QUORUM_RANGE) or subnet.prefixlen > 28:
            raise ValueError(f"{subnet} must be a /16../28 inside {QUORUM_RANGE}; fix: use e.g. 10.213.7.0/24")
        return subnet


class EtcdSettings(Strict):
    tls: bool = True  # client TLS
    peer_tls: bool = True
    heartbeat_ms: int = Field(100, ge=10, le=5000)
    election_timeout_ms: int = Field(1000, ge=50, le=50000)
    allow_even_members: bool = False

    @model_validator(mode="after")
    def election_after_heartbeats(self) -> "EtcdSettings":
        if self.election_timeout_ms < 5 * self.heartbeat_ms:  # etcd itself refuses to start otherwise
            raise ValueError(
                f"election_timeout_ms ({self.election_timeout_ms}) must be at least 5 x heartbeat_ms "
                f"({self.heartbeat_ms}); fix: raise election_timeout_ms to {5 * self.heartbeat_ms} or more"
            )
        return self


class ExtraFlags(Strict):
    extra_flags: dict[str, str] = Field(default_factory=dict, description="--name: value added to the component on "
                                        "every host")

    @field_validator("extra_flags")
    @classmethod
    def safe_flags(cls, flags: dict[str, str]) -> dict[str, str]:
        return checked_flags(flags)


class ApiserverSettings(ExtraFlags):
    service_cidr: ipaddress.IPv4Network = ipaddress.IPv4Network("10.96.0.0/12")
    port: int = Field(6443, ge=1, le=65535)
    anonymous_health_only: bool = Field(True, description="anonymous requests only on /livez, /readyz, /healthz")
    shutdown_delay_s: float = Field(0, ge=0, le=120, description="--shutdown-delay-duration: serving on after SIGTERM "
                                    "with /readyz failing, so the LB takes it out first (docs/scenarios.md)")


class ControllerManagerSettings(ExtraFlags):
    """kube-controller-manager's settings: its extra flags."""


DEFAULT_SCHEDULER = "default-scheduler"  # the scheduler a pod that names none asks for


class SchedulerSettings(Strict):
    """kube-scheduler's settings: its profiles, each serving the pods that name its scheduler. Only the upstream
    default (one profile, default-scheduler) runs without a configuration file."""

    profiles: list[SchedulerName] = Field(default_factory=lambda: [DEFAULT_SCHEDULER], min_length=1, max_length=8,
                                          description="the schedulerName of each profile, in order")

    @field_validator("profiles")
    @classmethod
    def distinct(cls, names: list[str]) -> list[str]:
        if len(set(names)) != len(names):  # kube-scheduler refuses a configuration that repeats one
            raise ValueError(f"profiles {names} repeat a name; fix: name each profile once")
        return names

    @property
    def upstream_default(self) -> bool:
        return self.profiles == [DEFAULT_SCHEDULER]


class LeaderElection(Strict):
    enabled: bool = True
    lease_duration_s: float = Field(15.0, ge=1, le=3600)
    renew_deadline_s: float = Field(10.0, ge=0.5, le=3600)
    retry_period_s: float = Field(2.0, ge=0.1, le=600)

    @model_validator(mode="after")
    def ordered(self) -> "LeaderElection":
        if self.renew_deadline_s >= self.lease_duration_s:
            raise ValueError(
                f"renew_deadline_s ({self.renew_deadline_s}) must be less than lease_duration_s "
                f"({self.lease_duration_s}); fix: e.g. lease 15, renew 10, retry 2 (the upstream defaults)"
            )
        if self.retry_period_s >= self.renew_deadline_s:
            raise ValueError(
                f"retry_period_s ({self.retry_period_s}) must be less than renew_deadline_s "
                f"({self.renew_deadline_s}); fix: e.g. retry 2 with renew 10"
            )
        return self


class HealthCheck(Strict):
    enabled: bool = True
    # rendered into haproxy.cfg: a URL path and nothing else (no spaces, no line breaks)
    path: HealthPath = "/readyz"
    interval_s: float = Field(2.0, ge=0.1, le=300)
    fall: int = Field(3, ge=1, le=100)
    rise: int = Field(2, ge=1, le=100)
    timeout_s: float = Field(2.0, ge=0.1, le=300)
    shutdown_sessions: bool = Field(True, description="close connections to a backend marked down")

    @property
    def detection_s(self) -> float:
        """ANCHORS: HAProxy marks a failing backend down after `fall` failed checks `interval_s` apart, plus the
        check timeout."""
        return self.interval_s * self.fall + self.timeout_s


class LoadBalancer(Strict):
    port: int = Field(6443, ge=1, le=65535)
    health_check: HealthCheck = HealthCheck()
    redispatch: bool = Field(True, description="retry a connection an apiserver refused on another one "
                                                       "(false: not retried at all, as a plain TCP balancer)")


MAX_HOSTS = 64  # the largest checked-in topology has 9; each host is a network namespace or a container
AUTO_ADDRESS_OFFSET = 10  # a host without an address gets the next free one from .10 on (address_of)


class Topology(Strict):
    name: TopologyName
    kubernetes: str = KUBERNETES_DEFAULT
    disposable: bool = False
    network: Network = Network()
    hosts: list[Host] = Field(min_length=1)
    etcd: EtcdSettings = EtcdSettings()
    apiserver: ApiserverSettings = ApiserverSettings()
    controller_manager: ControllerManagerSettings = ControllerManagerSettings()
    scheduler: SchedulerSettings = SchedulerSettings()
    leader_election: LeaderElection = LeaderElection()
    load_balancer: LoadBalancer = LoadBalancer()
    restart: dict[Component, RestartPolicy] = Field(default_factory=dict)
    hollow_nodes: HollowNodes = HollowNodes()
    upgrade: UpgradeStrategy = UpgradeStrategy()
    defects: Defects = Defects()

    @field_validator("kubernetes")
    @classmethod
    def supported_version(cls, value: str) -> str:
        try:
            kubernetes_version(value)
        except QuorumError as error:
            raise ValueError(f"{error.problem}; fix: {error.fix}") from None
        return value

    @model_validator(mode="after")
    def consistent(self) -> "Topology":
        if len(self.hosts) > MAX_HOSTS:
            raise ValueError(f"{len(self.hosts)} hosts, more than Quorum builds ({MAX_HOSTS}); fix: describe at most "
                             f"{MAX_HOSTS} hosts (hollow nodes are not hosts: hollow_nodes.count)")
        names = [host.name for host in self.hosts]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate host names {duplicates}; fix: give every host its own name")
        given = [host.address for host in self.hosts if host.address is not None]
        twice = sorted({str(a) for a in given if given.count(a) > 1})
        if twice:
            raise ValueError(f"duplicate host addresses {twice}; fix: give every host its own address or omit address")
        subnet = self.network.subnet
        reserved = {subnet.network_address, subnet.broadcast_address, bridge_address(subnet)}
        for host in self.hosts:
            if host.address is not None and (host.address not in subnet or host.address in reserved):
                raise ValueError(
                    f"host {host.name}: address {host.address} is not usable in {subnet} (network, broadcast and "
                    f"{bridge_address(subnet)}, the bridge, are reserved); fix: pick another address or omit it"
                )
        self._addresses_fit()
        self._ports_and_ranges_apart()
        if not self.controllers:
            raise ValueError("no host has the controller role; fix: add at least one host with roles: [controller]")
        members = len(self.etcd_hosts)
        # a topology with spare hosts passes through even counts while it scales (3, 4, 5 and back)
        if members % 2 == 0 and not self.etcd.allow_even_members and not self.spares:
            raise ValueError(
                f"{members} etcd members: an even count tolerates no more failures than one member less; "
                f"fix: use {members + 1} members, or set etcd.allow_even_members: true to test exactly that"
            )
        balancers = [h for h in self.hosts if Role.LOADBALANCER in h.roles]
        if len(balancers) > 1:
            raise ValueError("more than one loadbalancer host; fix: keep one (Quorum runs a single HAProxy)")
        if len(self.controllers) > 1 and not balancers:
            raise ValueError(
                f"{len(self.controllers)} apiservers and no load balancer; fix: add a host with roles: [loadbalancer]"
            )
        unknown = sorted(set(self.defects.block_etcd_clients_from) - set(names))
        if unknown:
            raise ValueError(f"defects.block_etcd_clients_from names unknown hosts {unknown}; fix: use host names")
        unknown = sorted(set(self.defects.short_lived_certificates) - {h.name for h in self.controllers})
        if unknown:
            raise ValueError(f"defects.short_lived_certificates names {unknown}, which run no apiserver; fix: name "
                             f"some of {', '.join(h.name for h in self.controllers)}")
        split = self.defects.split_etcd_member
        if split is not None and split not in [h.name for h in self.etcd_hosts]:
            raise ValueError(f"defects.split_etcd_member {split!r} runs no etcd member; fix: name one of "
                             f"{', '.join(h.name for h in self.etcd_hosts)}")
        odd = [h.name for h in self.hosts if h.retiring and Role.CONTROLLER not in h.roles]
        if odd:
            raise ValueError(f"hosts {odd} are retiring but are no controllers; fix: remove retiring: true")
        if self.spares and any(Role.ETCD in h.roles for h in self.hosts):
            raise ValueError("spare hosts join as controllers that run an etcd member each, which dedicated etcd hosts "
                             "rule out; fix: remove the spare hosts or the etcd role")
        for host in self.hosts:
            for alone in (Role.LOADBALANCER, Role.NODES, Role.SPARE):
                if alone in host.roles and len(host.roles) > 1:
                    raise ValueError(f"host {host.name}: a {alone.value} host must be a host of its own; "
                                     f"fix: roles: [{alone.value}]")
        hollow = self.hollow_nodes
        if not hollow.pod_cidr.subnet_of(QUORUM_RANGE) or hollow.pod_cidr.overlaps(self.network.subnet):
            raise ValueError(f"hollow_nodes.pod_cidr {hollow.pod_cidr} must lie inside {QUORUM_RANGE} and outside "
                             f"network.subnet {self.network.subnet}; fix: e.g. 10.213.192.0/18")
        if hollow.count and not self.node_hosts:
            raise ValueError(f"hollow_nodes.count is {hollow.count} but no host has the nodes role; fix: add a host "
                             "with roles: [nodes] (one kwok controller each, about 1000 nodes per controller)")
        if self.node_hosts and hollow.count > hollow.per_controller_max * len(self.node_hosts):
            wanted = -(-hollow.count // hollow.per_controller_max)
            raise ValueError(f"{hollow.count} hollow nodes on {len(self.node_hosts)} kwok controller(s) is more than "
                             f"{hollow.per_controller_max} each; fix: give {wanted} hosts roles: [nodes]")
        return self

    def _addresses_fit(self) -> None:
        """Every host without an address gets one of the subnet's free addresses from .10 on."""
        subnet = self.network.subnet
        given = {host.address for host in self.hosts if host.address is not None}
        free = sum(1 for offset in range(AUTO_ADDRESS_OFFSET, subnet.num_addresses - 1)
                   if subnet.network_address + offset not in given)
        wanted = sum(1 for host in self.hosts if host.address is None)
        if wanted > free:
            raise ValueError(f"{wanted} hosts without an address, but {subnet} has {free} free addresses from "
                             f".{AUTO_ADDRESS_OFFSET} on; fix: a larger network.subnet, or fewer hosts")

    def _ports_and_ranges_apart(self) -> None:
        """The apiserver's port is none of the fixed ports of the components beside it, and the service range is a
        private range Kubernetes takes, apart from the cluster's own addresses."""
        port = self.apiserver.port
        if port in set(FixedPort):
            raise ValueError(f"apiserver.port {port} is {FixedPort(port).name.lower().replace('_', ' ')}'s port on "
                             "the same host; fix: use another, e.g. 6443")
        services = self.apiserver.service_cidr
        if not 12 <= services.prefixlen <= 28 or not services.is_private:
            raise ValueError(f"apiserver.service_cidr {services} must be a private range from /12 (the largest "
                             "kube-apiserver takes) to /28; fix: e.g. 10.96.0.0/12")
        for other, what in ((self.network.subnet, "network.subnet"), (self.hollow_nodes.pod_cidr,
                                                                          "hollow_nodes.pod_cidr")):
            if services.overlaps(other):
                raise ValueError(f"apiserver.service_cidr {services} overlaps {what} {other}; fix: keep them apart, "
                                 "e.g. 10.96.0.0/12")

    # ---- derived views -------------------------------------------------------------------------

    @property
    def controllers(self) -> list[Host]:
        return [h for h in self.hosts if Role.CONTROLLER in h.roles]

    @property
    def spares(self) -> list[Host]:
        """Machines provisioned for the control plane that run nothing yet (Role.SPARE)."""
        return [h for h in self.hosts if Role.SPARE in h.roles]

    @property
    def etcd_hosts(self) -> list[Host]:
        """Dedicated etcd hosts if any, else every controller runs a member (the Typhoon layout)."""
        dedicated = [h for h in self.hosts if Role.ETCD in h.roles]
        return dedicated or self.controllers

    @property
    def node_hosts(self) -> list[Host]:
        """Hosts running a kwok controller for the hollow nodes."""
        return [h for h in self.hosts if Role.NODES in h.roles]

    def hollow_node_names(self, host: Host | str) -> list[str]:
        """The hollow nodes the kwok controller on this host plays: the count shared out in host order."""
        name = host if isinstance(host, str) else host.name
        hosts = [h.name for h in self.node_hosts]
        index = hosts.index(name)
        return [f"hollow-{name}-{i:04d}" for i in range(self.hollow_nodes.count) if i % len(hosts) == index]

    @property
    def load_balancer_host(self) -> Host | None:
        return next((h for h in self.hosts if Role.LOADBALANCER in h.roles), None)

    def address_of(self, host: Host | str) -> ipaddress.IPv4Address:
        """The host's address: as given, or the next free one from .10 on, in file order."""
        name = host if isinstance(host, str) else host.name
        taken = {h.address for h in self.hosts if h.address is not None}
        candidates = (a for a in self.network.subnet.hosts() if int(a) - int(self.network.subnet.network_address) >= 10)
        assigned: dict[str, ipaddress.IPv4Address] = {}
        for h in self.hosts:
            if h.address is not None:
                assigned[h.name] = h.address
            else:
                address = next(a for a in candidates if a not in taken)
                assigned[h.name] = address
        if name not in assigned:
            raise KeyError(f"no host named {name!r}")
        return assigned[name]

    def components_on(self, host: Host) -> list[Component]:
        components = []
        if host in self.etcd_hosts:
            components.append(Component.ETCD)
        if Role.CONTROLLER in host.roles:
            components += [Component.APISERVER, Component.CONTROLLER_MANAGER, Component.SCHEDULER]
        if Role.LOADBALANCER in host.roles:
            components.append(Component.HAPROXY)
        if Role.NODES in host.roles and self.hollow_nodes.count:
            components.append(Component.KWOK)
        return components

    def restart_policy(self, component: Component) -> RestartPolicy:
        return self.restart.get(component, RestartPolicy())

    def host(self, name: str) -> Host:
        for host in self.hosts:
            if host.name == name:
                return host
        raise KeyError(f"no host named {name!r}; hosts: {', '.join(h.name for h in self.hosts)}")

    @property
    def api_endpoint(self) -> str:
        """Where clients reach the API: the load balancer, or the single apiserver."""
        lb = self.load_balancer_host
        if lb is not None:
            return f"https://{self.address_of(lb)}:{self.load_balancer.port}"
        return f"https://{self.address_of(self.controllers[0])}:{self.apiserver.port}"


def unowned_address(subnet: ipaddress.IPv4Network, taken: set[str]) -> ipaddress.IPv4Address:
    """An address of `subnet` no host has (`taken`: the hosts' addresses), from the top down, where Quorum and
    Docker hand out none: what a mistyped endpoint inside the cluster's own network reaches, nothing."""
    for address in reversed(list(subnet.hosts())):
        if str(address) not in taken and address != bridge_address(subnet):
            return address
    raise ValueError(f"every address of {subnet} belongs to a host; fix: a larger network.subnet")


def bridge_address(subnet: ipaddress.IPv4Network) -> ipaddress.IPv4Address:
    """The root namespace's address on the cluster bridge: the first host address of the subnet."""
    return subnet.network_address + 1


def _describe(error: dict, example: str) -> str:
    location = ".".join(str(part) for part in error["loc"]) or "(top level)"
    if error["type"] == "extra_forbidden":
        return f"{location}: unknown key; fix: remove it or correct its spelling (see {example} for every key)"
    if error["type"] == "missing":
        return f"{location}: required; fix: add it"
    message = error["msg"].removeprefix("Value error, ")
    return f"{location}: {message}"


ModelT = TypeVar("ModelT", bound=BaseModel)


def validated(model: type[ModelT], data: object, source: str, example: str = "clusters/ha3.yaml") -> ModelT:
    """`data` as a `model`, or a TopologyError that lists every invalid field of `source`."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "\n".join(f"  - {_describe(e, example)}" for e in error.errors())
        raise TopologyError(f"{source} is invalid:\n{problems}", f"edit {source} as the lines above say") from None


def read_topology_file(path: str | Path, example: str) -> object:
    """The YAML of a topology file, or a TopologyError saying what is wrong with the file (harness/userfile.py)."""
    return read_yaml(path, TopologyError, "topology file", example)


def parse_topology(data: object, source: str = "<topology>") -> Topology:
    return validated(Topology, data, source)


def load_topology(path: str | Path) -> Topology:
    data = read_topology_file(path, "clusters/ha3.yaml")
    if isinstance(data, dict) and data.get("backend") == "kind":
        raise TopologyError(f"{path} is a kind topology (backend: kind)",
                            f"use it with --backend kind: quorum up {path} --backend kind, pytest scenarios/ --backend kind")
    return parse_topology(data, str(path))
