"""An inventory: a cluster Quorum did not build (a staging control plane), described so Quorum can reach it
(a kubeconfig, the API through its load balancer, SSH to the controllers and etcd hosts) and knows how each
component runs there. Every value here reaches a command line or a connection, so each is checked by a rule that
names the field and the fix (docs/target.md). Nothing here connects to anything."""

from __future__ import annotations

from datetime import time
from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from harness.topology import Component, HealthCheck, Strict
from harness.validation import (HOST_PATH, Address, ApiUrl, ContextName, EtcdUrl, HostName, HostPath, Unit, User)

class HostRole(str, Enum):
    CONTROLLER = "controller"  # runs kube-apiserver, kube-controller-manager, kube-scheduler
    ETCD = "etcd"  # runs an etcd member


class HostKeyPolicy(str, Enum):
    STRICT = "strict"  # the host key must be in known_hosts: a changed key refuses the connection
    ACCEPT_NEW = "accept-new"  # a host not listed yet is added on first contact; a changed key still refuses


class Ssh(Strict):
    """How Quorum logs in; every field can be set once under `ssh:` and overridden per host."""

    port: int = Field(22, ge=1, le=65535)
    user: User = "root"
    key_file: str | None = Field(None, description="a private key on this machine (mode 0600)")
    known_hosts: str = Field("~/.ssh/known_hosts", description="the known_hosts file on this machine")
    host_key_policy: HostKeyPolicy = HostKeyPolicy.STRICT
    sudo: bool = Field(False, description="run what needs root through `sudo -n` (passwordless)")


class SshOverride(Strict):
    port: int | None = Field(None, ge=1, le=65535)
    user: User | None = None
    key_file: str | None = None
    sudo: bool | None = None


class Host(Strict):
    name: HostName
    address: Address
    roles: list[HostRole] = Field(min_length=1)
    ssh: SshOverride = SshOverride()


class StaticPod(Strict):
    runs_as: Literal["static-pod"]
    manifest_dir: HostPath = "/etc/kubernetes/manifests"  # the kubelet's staticPodPath


class SystemdUnit(Strict):
    runs_as: Literal["systemd"]
    unit: Unit


class PlainProcess(Strict):
    runs_as: Literal["process"]  # started by something Quorum does not know (found by its binary's name)


# one of them by runs_as, so a problem is named for the kind the inventory says, not for every kind
HowItRuns = Annotated[StaticPod | SystemdUnit | PlainProcess, Field(discriminator="runs_as")]


class Kubeconfig(Strict):
    path: str = Field(description="on this machine")
    context: ContextName | None = None


class EtcdAccess(Strict):
    """The client certificate Quorum's etcd monitors use: files on this machine, or (`on_hosts: true`) the paths
    on the etcd hosts, read over SSH into Quorum's run directory (mode 0600) when the run starts."""

    endpoints: list[EtcdUrl] = Field(min_length=1, description="https://address:2379 of each member")
    ca: str
    cert: str
    key: str
    on_hosts: bool = False

    @model_validator(mode="after")
    def _paths_on_hosts(self) -> "EtcdAccess":
        if self.on_hosts:  # they reach a command line on the host
            for field in ("ca", "cert", "key"):
                try:
                    HOST_PATH.check(getattr(self, field))
                except ValueError as error:
                    raise ValueError(f"etcd.{field}: {error}") from None
        return self


class LoadBalancer(Strict):
    """What Quorum cannot read from someone else's load balancer: how it checks the apiservers, as configured there
    (e.g. HAProxy's inter, timeout check, fall, rise). The configuration checks judge it against the objectives."""

    health_check: HealthCheck | None = None


class Limits(Strict):
    """Enforced before any fault acts (docs/target.md)."""

    max_faults_at_once: int = Field(1, ge=1, le=10)
    allowed_hosts: list[str] | None = Field(None, description="hosts faults may act on; default: every host")
    window_utc: str | None = Field(None, description="HH:MM-HH:MM: when faults may act (UTC)")

    @field_validator("window_utc")
    @classmethod
    def _window(cls, value: str | None) -> str | None:
        if value is not None:
            start, _, end = value.partition("-")
            try:
                time.fromisoformat(start), time.fromisoformat(end)
            except ValueError:
                raise ValueError(f"{value!r} is not a window; fix: write HH:MM-HH:MM in UTC, e.g. 22:00-04:00") from None
        return value

    def window(self) -> tuple[time, time] | None:
        if self.window_utc is None:
            return None
        start, _, end = self.window_utc.partition("-")
        return time.fromisoformat(start), time.fromisoformat(end)


class HollowNodes(Strict):
    """Node objects Quorum adds to a disposable target for the load suite, played by one kwok controller on this
    machine (harness/remote/hollow_fleet.py): labelled and tainted as Quorum's, removed when the run ends."""

    count: int = Field(ge=1, le=1000, description="how many; the load suite's heartbeats and pods need them")
    node_lease_s: int = Field(40, ge=10, le=3600, description="the nodes' Lease duration; renewed at a quarter of it "
                              "(the kubelet's nodeLeaseDurationSeconds, default 40 s)")
    create_rate_per_s: float = Field(20.0, gt=0, le=100, description="how fast Quorum creates the Node objects (the "
                                     "SLOs' churn prerequisite is 20 objects a second)")

    @model_validator(mode="before")
    @classmethod
    def shorthand(cls, data: object) -> object:
        return {"count": data} if isinstance(data, int) else data


class Inventory(Strict):
    name: HostName = Field(description="names the target in reports and the gate")
    disposable: bool = Field(False, description="true allows destructive faults; a staging cluster is not")
    kubeconfig: Kubeconfig
    api_endpoint: ApiUrl = Field(description="https://address:port of the load balancer in front of the apiservers")
    ssh: Ssh = Ssh()
    hosts: list[Host] = Field(min_length=1)
    components: dict[Component, HowItRuns]
    etcd: EtcdAccess | None = None
    load_balancer: LoadBalancer = LoadBalancer()
    limits: Limits = Limits()
    work_probes: bool = Field(False, description="true lets the conformance suite create and delete objects of "
                              "Quorum's own (namespaces, Deployments whose pods run nowhere) to see the controllers "
                              "work; a disposable target allows them anyway")
    hollow_nodes: HollowNodes | None = Field(None, description="hollow nodes Quorum adds while it runs (disposable "
                                             "targets only)")

    @model_validator(mode="after")
    def _consistent(self) -> "Inventory":
        if self.hollow_nodes is not None and not self.disposable:
            raise ValueError("hollow_nodes adds Node objects to the cluster, and the DaemonSets that tolerate every "
                             "taint put pods on them: only on a disposable target; fix: remove hollow_nodes, or set "
                             "disposable: true on a cluster that may be changed")
        names = [host.name for host in self.hosts]
        if len(set(names)) != len(names):
            raise ValueError(f"host names repeat: {sorted({n for n in names if names.count(n) > 1})}; fix: name each host once")
        if not any(HostRole.CONTROLLER in host.roles for host in self.hosts):
            raise ValueError("no host has the controller role; fix: list the hosts that run kube-apiserver with "
                             "roles: [controller]")
        if not any(HostRole.ETCD in host.roles for host in self.hosts):
            raise ValueError("no host has the etcd role; fix: add roles: [etcd] to the hosts that run an etcd member "
                             "(with controller, for etcd on the controllers)")
        unknown = sorted(set(self.limits.allowed_hosts or []) - set(names))
        if unknown:
            raise ValueError(f"limits.allowed_hosts names unknown hosts {unknown}; fix: use names from hosts: {names}")
        needed = {Component.ETCD, Component.APISERVER, Component.CONTROLLER_MANAGER, Component.SCHEDULER}
        extra = sorted(c.value for c in set(self.components) - needed)
        missing = sorted(c.value for c in needed - set(self.components))
        if extra or missing:
            raise ValueError(f"components: {'unknown ' + str(extra) if extra else 'missing ' + str(missing)}; fix: "
                             f"describe how each of {sorted(c.value for c in needed)} runs (static-pod, systemd, process)")
        return self

    def hosts_with(self, role: HostRole) -> list[str]:
        return [host.name for host in self.hosts if role in host.roles]

    def ssh_for(self, name: str) -> Ssh:
        """The SSH settings of one host: its overrides over the inventory's `ssh:`."""
        host = next(h for h in self.hosts if h.name == name)
        overrides = {k: v for k, v in host.ssh.model_dump().items() if v is not None}
        return self.ssh.model_copy(update=overrides)
