"""An inventory: a cluster Quorum did not build (a staging control plane), described so Quorum can reach it
(a kubeconfig, the API through its load balancer, SSH to the controllers and etcd hosts) and knows how each
component runs there. Every value here reaches a command line or a connection, so each is checked by a rule that
names the field and the fix (docs/target.md). Nothing here connects to anything."""

from __future__ import annotations

import re
from datetime import time
from enum import Enum
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, field_validator, model_validator

from harness.topology import Component, HealthCheck, Strict

# RFC 1123 host names and the names Quorum gives hosts: they reach ssh, logs and file names
HOST_NAME = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
ADDRESS = r"^[A-Za-z0-9]([A-Za-z0-9.:-]{0,251}[A-Za-z0-9])?$"  # an IPv4/IPv6 address or a DNS name, nothing else
USER = r"^[a-z_][a-z0-9_-]{0,31}$"  # useradd's default NAME_REGEX
UNIT = r"^[A-Za-z0-9@._:-]{1,200}\.service$"
SAFE_PATH = r"^/[A-Za-z0-9._/@+-]{0,1000}$"  # an absolute path on a host, with no character a shell would read


def _matches(pattern: str, value: str, what: str, fix: str) -> str:
    if not re.match(pattern, value):
        raise ValueError(f"{value!r} is not {what}; fix: {fix}")
    return value


def _host_path(value: str, field: str) -> str:
    _matches(SAFE_PATH, value, "an absolute path of plain characters", f"give {field} as /dir/file without spaces")
    if ".." in PurePosixPath(value).parts:
        raise ValueError(f"{value!r} climbs out with '..'; fix: give {field} without '..'")
    return value


class HostRole(str, Enum):
    CONTROLLER = "controller"  # runs kube-apiserver, kube-controller-manager, kube-scheduler
    ETCD = "etcd"  # runs an etcd member


class HostKeyPolicy(str, Enum):
    STRICT = "strict"  # the host key must be in known_hosts: a changed key refuses the connection
    ACCEPT_NEW = "accept-new"  # a host not listed yet is added on first contact; a changed key still refuses


class Ssh(Strict):
    """How Quorum logs in; every field can be set once under `ssh:` and overridden per host."""

    port: int = Field(22, ge=1, le=65535)
    user: str = "root"
    key_file: str | None = Field(None, description="a private key on this machine (mode 0600)")
    known_hosts: str = Field("~/.ssh/known_hosts", description="the known_hosts file on this machine")
    host_key_policy: HostKeyPolicy = HostKeyPolicy.STRICT
    sudo: bool = Field(False, description="run what needs root through `sudo -n` (passwordless)")

    @field_validator("user")
    @classmethod
    def _user(cls, value: str) -> str:
        return _matches(USER, value, "a login name", "give the account's name, e.g. core or ubuntu")


class SshOverride(Strict):
    port: int | None = Field(None, ge=1, le=65535)
    user: str | None = None
    key_file: str | None = None
    sudo: bool | None = None

    @field_validator("user")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        return value if value is None else _matches(USER, value, "a login name", "give the account's name")


class Host(Strict):
    name: str
    address: str
    roles: list[HostRole] = Field(min_length=1)
    ssh: SshOverride = SshOverride()

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _matches(HOST_NAME, value, "a host name", "use lower-case letters, digits and '-', e.g. controller-0")

    @field_validator("address")
    @classmethod
    def _address(cls, value: str) -> str:
        return _matches(ADDRESS, value, "an IP address or a DNS name", "give the address SSH reaches the host at")


class StaticPod(Strict):
    runs_as: Literal["static-pod"]
    manifest_dir: str = "/etc/kubernetes/manifests"  # the kubelet's staticPodPath

    @field_validator("manifest_dir")
    @classmethod
    def _dir(cls, value: str) -> str:
        return _host_path(value, "manifest_dir")


class SystemdUnit(Strict):
    runs_as: Literal["systemd"]
    unit: str

    @field_validator("unit")
    @classmethod
    def _unit(cls, value: str) -> str:
        return _matches(UNIT, value, "a systemd service name", "give the unit as name.service, e.g. etcd-member.service")


class PlainProcess(Strict):
    runs_as: Literal["process"]  # started by something Quorum does not know (found by its binary's name)


HowItRuns = StaticPod | SystemdUnit | PlainProcess


class Kubeconfig(Strict):
    path: str = Field(description="on this machine")
    context: str | None = Field(None, max_length=253, pattern=r"^[^\x00\r\n]+$")


class EtcdAccess(Strict):
    """The client certificate Quorum's etcd monitors use: files on this machine, or (`on_hosts: true`) the paths
    on the etcd hosts, read over SSH into Quorum's run directory (mode 0600) when the run starts."""

    endpoints: list[str] = Field(min_length=1, description="https://address:2379 of each member")
    ca: str
    cert: str
    key: str
    on_hosts: bool = False

    @field_validator("endpoints")
    @classmethod
    def _endpoints(cls, values: list[str]) -> list[str]:
        for value in values:
            _matches(r"^https://[A-Za-z0-9.:\[\]-]+:[0-9]{1,5}$", value, "an etcd client URL over TLS",
                     "write each as https://address:2379")
        return values

    @model_validator(mode="after")
    def _paths_on_hosts(self) -> "EtcdAccess":
        if self.on_hosts:  # they reach a command line on the host
            for field in ("ca", "cert", "key"):
                _host_path(getattr(self, field), f"etcd.{field}")
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


class Inventory(Strict):
    name: str = Field(pattern=HOST_NAME, description="names the target in reports and the gate")
    disposable: bool = Field(False, description="true allows destructive faults; a staging cluster is not")
    kubeconfig: Kubeconfig
    api_endpoint: str = Field(description="https://address:port of the load balancer in front of the apiservers")
    ssh: Ssh = Ssh()
    hosts: list[Host] = Field(min_length=1)
    components: dict[Component, HowItRuns]
    etcd: EtcdAccess | None = None
    load_balancer: LoadBalancer = LoadBalancer()
    limits: Limits = Limits()

    @field_validator("api_endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        return _matches(r"^https://[A-Za-z0-9.:\[\]-]+(:[0-9]{1,5})?$", value, "an https URL of the API",
                        "write it as https://address:6443 (the load balancer's address)")

    @model_validator(mode="after")
    def _consistent(self) -> "Inventory":
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
