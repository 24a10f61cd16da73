"""A cluster Quorum did not build, as a Target: the hosts and components an inventory describes (docs/target.md),
reached over SSH (harness/remote/ssh.py), the API through the inventory's endpoint with the kubeconfig's
credentials, etcd with the inventory's client certificate. It offers signals, Quorum-tagged network rules, shaping
that never replaces the owner's qdisc (harness/backends/remote/links.py), and holds and flag overrides through each
component's keeper (harness/backends/remote/keepers.py), each fault admitted within the inventory's limits and
journaled on the hosts it touches (harness/backends/remote/host_journal.py)."""

from __future__ import annotations

import re
import signal as signals
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from harness.backends.remote import host_journal, keepers, limits, promises
from harness.backends.remote.clients import InventoryClients, resolved
from harness.backends.remote.health import InventoryHealth
from harness.remote import hollow_fleet
from harness.backends.remote.links import OwnersLinks
from harness.components.flags import parse_flags
from harness.components.static_pod_keeper import StaticPodKeeper
from harness.components.systemd_keeper import SystemdKeeper
from harness.errors import ClusterError
from harness.inventory.check import ssh_hosts
from harness.inventory.discover import find_pids
from harness.inventory.load import load_inventory
from harness.inventory.model import HostRole as InventoryRole, Inventory
from harness.remote.ssh import RemoteError, SshHost
from harness.run.state import RunState
from harness.target.capabilities import Capability
from harness.target.hosts import Ran
from harness.target.keeper import Keeper
from harness.target.protocol import HostRole, Target, Unsupported, component_name
from harness.topology import Component, EtcdSettings, HealthCheck, LeaderElection

if TYPE_CHECKING:
    from harness.faults.base import Fault

INVENTORY = "topology.yaml"  # the run directory's copy of the inventory, its local paths made absolute
ROLES = {HostRole.CONTROLLER: InventoryRole.CONTROLLER, HostRole.ETCD: InventoryRole.ETCD}
TOOL_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")  # a tool looked up on the hosts: iperf3, etcdctl


class RemoteTarget(InventoryClients, Target):
    BACKEND_NAME = "remote"
    topology: Inventory
    health_poll_s = 0.5  # each check is a command over SSH or a request across the network
    poll_interval_s = 2.0
    settle_s = 60.0  # how long the guard waits for the cluster to heal itself before it skips a test

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.state = RunState.load(self.run_dir)
        self.topology = load_inventory(self.run_dir / INVENTORY)

    # over SSH; holds and overrides need a keeper the inventory names (a plain process has none: Unsupported at the
    # call, and destructive scenarios refused for such an inventory); shaping never replaces the owner's qdisc;
    # iperf3 is the owner's (tool_path: one missing on a host is Unsupported, named with the host); its nodes are
    # read through the API (a cluster without kubelets skips those checks, naming what it lacks); its control plane
    # is static pods where the inventory says so, and it has hollow nodes where the inventory asks for them
    # (RemoteBackend.topology_lacks)
    KEEPERS = (SystemdKeeper, StaticPodKeeper, keepers.NoKnownKeeper)
    CAPABILITIES = frozenset({Capability.HOST_BANDWIDTH, Capability.NODES, Capability.HOLLOW_NODES})
    NETWORK = OwnersLinks
    HEALTH = InventoryHealth

    def describe(self) -> dict[str, str]:
        return super().describe() | {"target": self.name,
                                     "hosts": ", ".join(f"{h.name} ({h.address})" for h in self.topology.hosts)}

    # ---- hollow nodes (harness/remote/hollow_fleet.py) -------------------------------------------

    def hollow_players(self) -> dict[str, str]:
        """The run's fleet: its nodes, each played by the one kwok controller this run started."""
        fleet = hollow_fleet.Fleet.load(self.run_dir)
        return {name: fleet.player for name in fleet.names} if fleet is not None else {}

    def hollow_selector(self) -> str:
        fleet = hollow_fleet.Fleet.load(self.run_dir)
        return fleet.selector if fleet is not None else super().hollow_selector()

    # ---- hosts ---------------------------------------------------------------------------------

    def hosts(self, role: str | None = None) -> list[str]:
        if role is None:
            return [host.name for host in self.topology.hosts]
        return self.topology.hosts_with(ROLES[role]) if role in ROLES else []

    def component_hosts(self, component: Component | str) -> list[str]:
        name = component_name(component)
        if name == Component.ETCD.value:
            return self.hosts(HostRole.ETCD)
        return self.hosts(HostRole.CONTROLLER) if Component(name) in self.topology.components else []

    @cached_property
    def ssh(self) -> dict[str, SshHost]:
        return ssh_hosts(self.topology, self.run_dir)

    def run(self, host: str, argv: list[str], *, timeout: float = 60.0) -> Ran:
        return self.ssh[host].run(argv, timeout_s=timeout)

    def command_failed(self, host: str, ran: Ran) -> RemoteError:
        return RemoteError(f"{ran.argv[0]} on {self.ssh[host].where} exited {ran.rc}: {ran.stderr.strip()[-300:]}",
                           "run it there by hand to see why")

    def put_file(self, host: str, path: str, text: str) -> None:
        self.ssh[host].write_file(path, text.encode())

    def close(self) -> None:
        for ssh in self.__dict__.get("ssh", {}).values():
            ssh.close()

    # ---- components' flags and the hosts' tools -----------------------------------------------

    def flags_seen(self, component: Component | str, host: str) -> dict[str, str]:
        """The flags a component was last seen running with (kept: a read-only target changes none of them, and
        health checks ask for its ports on every poll)."""
        key = (component_name(component), host)
        if key not in self._seen_flags:
            self._seen_flags[key] = parse_flags(self._argv(component, host)[1:])
        return self._seen_flags[key]

    @cached_property
    def _seen_flags(self) -> dict[tuple[str, str], dict[str, str]]:
        return {}

    def tool_path(self, name: str) -> str:
        """A tool the hosts' owner installed, at the same path on every host (Quorum installs nothing on someone
        else's hosts): found with `command -v`, once per target; one missing or elsewhere on a host is Unsupported,
        named with the host and the fix."""
        if not TOOL_NAME.match(name):  # it reaches a shell on the hosts: a plain name only
            raise ValueError(f"{name!r} is not a tool's name")
        if name not in self._tools:
            found = {host: self.exec(host, ["sh", "-c", 'command -v "$1" || true', "sh", name], check=False).strip()
                     for host in self.hosts()}
            missing = sorted(host for host, path in found.items() if not path)
            if missing:
                raise Unsupported(f"{name} is not installed on {', '.join(missing)} (Quorum installs nothing on "
                                  "the hosts of a cluster it did not build)",
                                  f"install {name} on every host of the inventory (Debian: apt-get install {name})")
            if len(set(found.values())) > 1:
                raise Unsupported(f"{name} is at different paths on the hosts: {found}",
                                  f"install {name} the same way on every host")
            self._tools[name] = next(iter(found.values()))
        return self._tools[name]

    @cached_property
    def _tools(self) -> dict[str, str]:
        return {}

    # ---- components ----------------------------------------------------------------------------

    def keeper(self, component: Component | str) -> Keeper:
        """What keeps the component running, as the inventory says (harness/backends/remote/keepers.py)."""
        return keepers.keeper_of(self, Component(component_name(component)))

    def pid(self, component: Component | str, host: str) -> int | None:
        pids = find_pids(self.ssh[host], [component_name(component)])[component_name(component)]
        return pids[0] if len(pids) == 1 else None

    def _argv(self, component: Component | str, host: str) -> list[str]:
        pid = self.pid(component, host)
        if pid is None:
            raise ClusterError(f"{component_name(component)}@{host} is not running (or runs more than once)",
                               f"quorum inventory check shows what runs on {host}")
        return [a for a in self.ssh[host].read_file(f"/proc/{pid}/cmdline").decode(errors="replace").split("\0") if a]

    def command_line(self, component: Component | str, host: str) -> list[str]:
        """A static pod's manifest; elsewhere what runs (Quorum did not write this cluster's configuration)."""
        return self.keeper(component).command_line(host) or self._argv(component, host)

    def live_flags(self, component: Component | str) -> dict[str, dict[str, str]]:
        return {host: parse_flags(self._argv(component, host)[1:]) for host in self.component_hosts(component)}

    def signal(self, component: Component | str, host: str, signal: str, *, pid: int | None = None) -> None:
        if not isinstance(getattr(signals, signal, None), signals.Signals):  # a name, never a value from elsewhere
            raise ClusterError(f"{signal!r} is not a signal", "name one as Python's signal module does, e.g. SIGKILL")
        pid = pid if pid is not None else self.pid(component, host)
        if pid is None:  # a process that is gone needs nothing
            return
        result = self.ssh[host].run(["kill", "-s", signal.removeprefix("SIG"), str(int(pid))])
        if not result.ok and "no such process" not in result.stderr.lower():  # gone meanwhile: nothing to do
            # a signal that was not delivered (a login without the right to) must not pass for a fault that acted
            raise RemoteError(f"kill -s {signal} {pid} on {self.ssh[host].where} failed: {result.stderr.strip()[-300:]}",
                              "the login needs root or passwordless sudo (ssh.sudo: true)")

    def admit(self, fault: "Fault", active: list["Fault"]) -> None:
        """The inventory's limits (harness/backends/remote/limits.py)."""
        limits.admit(self.topology.limits, fault, active, set(self.hosts()))

    def remember_fault(self, fault: "Fault") -> None:
        host_journal.remember(self, fault)

    def forget_fault(self, fault: "Fault") -> None:
        host_journal.forget(self, fault.id, host_journal.touched(self, fault))

    def override_command_line(self, component: Component | str, host: str, argv: list[str]) -> None:
        self.keeper(component).override(host, argv)
        self._seen_flags.pop((component_name(component), host), None)

    def restore_command_line(self, component: Component | str, host: str) -> None:
        self.keeper(component).restore(host)
        self._seen_flags.pop((component_name(component), host), None)

    # ---- what the configuration promises ----------------------------------------------------------

    def leader_election(self) -> LeaderElection:
        return promises.leader_election(self)  # Quorum did not write the configuration: what runs is what promises

    def etcd_settings(self) -> EtcdSettings:
        return promises.etcd_settings(self)

    def load_balancer_check(self) -> HealthCheck | None:
        """As the inventory states it: Quorum cannot read the configuration of someone else's load balancer."""
        check = self.topology.load_balancer.health_check
        if check is None:
            raise Unsupported("the inventory does not say how the load balancer checks the apiservers",
                              "add load_balancer.health_check (interval_s, timeout_s, fall, rise) as your load "
                              "balancer is configured (docs/target.md)")
        return check if check.enabled else None

    # ---- network -------------------------------------------------------------------------------

    def address(self, host: str) -> str | None:
        return self._address(host)

    def link(self, host: str) -> str:
        """The interface that holds the host's inventory address (what random packet loss acts on)."""
        addresses = resolved(self._address(host)) | {self._address(host)}
        for line in self.exec(host, ["ip", "-o", "addr", "show"]).splitlines():
            words = line.split()  # "2: eth0    inet 10.0.0.11/24 brd ..."
            if len(words) > 3 and words[3].split("/")[0] in addresses:
                return words[1].split("@")[0]
        raise ClusterError(f"no interface of {host} holds its inventory address {self._address(host)}",
                           "give the host's own address in the inventory")

    # ---- what faults leave -----------------------------------------------------------------------

    def sweep(self, keep: frozenset[str] = frozenset()) -> list[str]:  # no remote fault is unsafe to restore
        """Without a journal, on every host: each of its components' keepers undoes what a fault left (held
        manifests back, crash loops ended, originals restored, held units started, Quorum's drop-ins removed)."""
        done = []
        for host in self.hosts():
            try:
                for component in self.topology.components:
                    if host in self.component_hosts(component):
                        done += self.keeper(component).sweep(host)
            except ClusterError as error:  # a host that does not answer: the others are still swept
                done.append(f"could not sweep {host}: {error.problem}")
        return done
