"""A cluster of the process backend as a Target: each host a network namespace, each component a process under
its keeper (Quorum's supervisor), every file in the run directory. Loaded from the run directory by any process."""

from __future__ import annotations

import dataclasses
import json
import os
import signal as signals
from functools import cached_property
from pathlib import Path

from harness.backends.process.clients import BuiltClients
from harness.backends.process.health import SupervisedHealth
from harness.backends.process.membership import Membership
from harness.backends.process.packages import install_release, installed_releases
from harness.backends.process.processes import cmdline, pids_in_netns, send
from harness.backends.process.supervised_keeper import SupervisedKeeper
from harness.backends.process.supervisor import Control
from harness.components import ComponentSpec, Layout, specs_for
from harness.components.flags import parse_flags
from harness.errors import ClusterError, FaultError
from harness.net.netns import host_link, netns_name
from harness.run.state import RunState
from harness.shell import completed, in_netns, run
from harness.target.capabilities import Capability
from harness.target.hosts import Ran
from harness.target.protocol import HostRole, Target, component_name
from harness.toolchain.install import Toolchain
from harness.toolchain.versions import Version
from harness.wait import eventually
from harness.topology import Component, HealthCheck, Role, Topology, load_topology

TERM_GRACE_S = 2.0  # kube-apiserver drains in-flight requests for up to a minute on SIGTERM; a fault must not wait


def layout_for(topology: Topology, run_dir: Path) -> Layout:
    return Layout(topology, run_dir, Toolchain(topology.kubernetes).path)


class ProcessTarget(BuiltClients, Membership, Target):
    BACKEND_NAME = "process"
    topology: Topology

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.state = RunState.load(self.run_dir)
        self.topology = load_topology(self.run_dir / "topology.yaml")
        self.layout = layout_for(self.topology, self.run_dir)

    HEALTH = SupervisedHealth

    KEEPERS = (SupervisedKeeper,)
    CAPABILITIES = frozenset({Capability.RUN_FILES, Capability.ETCD_DATA, Capability.HOLLOW_NODES,
                              Capability.HOST_BANDWIDTH, Capability.RELEASES, Capability.SCALE})

    # ---- identity ------------------------------------------------------------------------------

    def hosts(self, role: str | None = None) -> list[str]:
        roles = {HostRole.CONTROLLER: [Role.CONTROLLER], HostRole.ETCD: None, HostRole.WORKER: [Role.NODES],
                 HostRole.LOADBALANCER: [Role.LOADBALANCER]}
        if role == HostRole.ETCD:
            return [h.name for h in self.topology.etcd_hosts]
        if role is not None and role not in roles:
            raise KeyError(f"no host role {role!r}; roles: {', '.join(roles)}")
        return [h.name for h in self.topology.hosts if role is None or any(r in h.roles for r in roles[role])]

    def component_hosts(self, component: Component | str) -> list[str]:
        wanted = Component(component_name(component))
        return [h.name for h in self.topology.hosts if wanted in self.topology.components_on(h)]

    @cached_property
    def specs(self) -> dict[str, ComponentSpec]:
        """Each component as its host is configured: the topology's, on the release installed there if a change
        installed one (harness/backends/process/packages.py)."""
        installed = installed_releases(self.run_dir)
        specs = {spec.id: spec for spec in specs_for(self.layout)}
        for cid, release in installed.items():
            if cid in specs:
                spec = specs[cid]
                specs[cid] = dataclasses.replace(spec, argv=[self.release_binary(spec.component, release),
                                                             *spec.argv[1:]])
        return specs

    def spec(self, component: Component | str, host: str) -> ComponentSpec:
        return self.specs[f"{component_name(component)}@{host}"]

    def control(self, component_id: str) -> Control:
        if component_id not in self.specs:
            raise KeyError(f"no component {component_id!r}; components: {', '.join(self.specs)}")
        return Control(self.run_dir / "components" / component_id)

    def keeper_pid(self, component_id: str) -> int | None:
        """The pid of the component's keeper (its supervisor process)."""
        try:
            pid = int((self.run_dir / "components" / component_id / "keeper.pid").read_text())
        except (FileNotFoundError, ValueError):
            return None
        return pid if Path(f"/proc/{pid}").exists() else None

    def _control(self, component: Component | str, host: str) -> Control:
        return self.control(f"{component_name(component)}@{host}")

    # ---- commands and files ----------------------------------------------------------------------

    def netns(self, host: str) -> str:
        return netns_name(self.run_id, host)

    def run(self, host: str, argv: list[str], *, timeout: float = 60.0) -> Ran:
        done = completed(in_netns(self.netns(host), argv), timeout=timeout)
        return Ran(tuple(argv), done.returncode, done.stdout, done.stderr)

    def read_file(self, host: str, path: str) -> str:
        return Path(path).read_text()  # hosts share the machine's filesystem

    def put_file(self, host: str, path: str, text: str) -> None:
        target = Path(path)
        hidden = target.with_name(f".{target.name}.quorum")
        hidden.unlink(missing_ok=True)
        # owner-only, as the remote target's writes (umask 077): what is written may be a private key
        with os.fdopen(os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
            out.write(text)
        os.replace(hidden, target)

    def _stat(self, host: str, pid: int) -> list[str]:
        try:  # hosts share the machine's pid namespace
            return Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return []

    # ---- components ----------------------------------------------------------------------------

    def pid(self, component: Component | str, host: str) -> int | None:
        return self._control(component, host).child_pid()

    def signal(self, component: Component | str, host: str, signal: str, *, pid: int | None = None) -> None:
        send(pid if pid is not None else self.pid(component, host), getattr(signals, signal))

    def keeper(self, component: Component | str) -> SupervisedKeeper:
        """Quorum's supervisor (harness/backends/process/supervised_keeper.py)."""
        return SupervisedKeeper(self, Component(component_name(component)))

    def ensure_running(self, component: Component | str, host: str) -> None:
        self._control(component, host).kick()  # only acts while it is down, whatever the restart policy

    def term_grace_s(self, component: Component | str) -> float:
        """How long a SIGTERM'd component is given before SIGKILL: a short grace, after the shutdown delay an
        apiserver is configured to keep serving for (it fails /readyz meanwhile, so the LB takes it out)."""
        delay = self.topology.apiserver.shutdown_delay_s if component_name(component) == Component.APISERVER else 0
        return delay + TERM_GRACE_S

    def terminate(self, component: Component | str, host: str, grace_s: float | None = None) -> None:
        """Stop the running process now: SIGTERM, then SIGKILL after a grace (default: term_grace_s)."""
        grace_s = self.term_grace_s(component) if grace_s is None else grace_s
        control = self._control(component, host)
        pid = control.child_pid()
        if pid is None:
            return
        send(pid, signals.SIGCONT)
        if grace_s > 0:
            send(pid, signals.SIGTERM)
            if eventually(lambda: control.child_pid() != pid, grace_s):
                return
        send(pid, signals.SIGKILL)
        if not eventually(lambda: control.child_pid() != pid, 10.0):
            raise FaultError(f"{component_name(component)}@{host} (pid {pid}) did not die after SIGKILL",
                             "check it with ps; quorum down and up again")

    def live_flags(self, component: Component | str) -> dict[str, dict[str, str]]:
        flags = {}
        for host in self.component_hosts(component):
            argv = cmdline(self.pid(component, host) or 0)
            if argv is None:
                raise ClusterError(f"{component_name(component)}@{host} is not running",
                                   f"quorum status {self.run_dir} shows the components")
            flags[host] = parse_flags(argv[1:])
        return flags

    def events(self) -> list[dict]:
        path = self.supervisor_events()
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def log_path(self, component_id: str) -> Path:
        return self.run_dir / "logs" / f"{component_id}.log"

    def config_file(self, component: Component | str, host: str) -> str:
        if Component(component_name(component)) is not Component.HAPROXY:
            raise KeyError(f"Quorum writes a configuration file for haproxy only, not {component_name(component)}")
        return str(self.layout.config_dir(host) / "haproxy.cfg")

    def secret_files(self) -> list[Path]:
        return [*self.run_dir.joinpath("pki").rglob("*.key"), *self.run_dir.rglob("*.kubeconfig")]

    def etcd_data_dir(self, host: str) -> str:
        self.topology.host(host)  # KeyError naming the hosts
        return str(self.layout.data_dir(host) / "etcd")

    def tool_path(self, name: str) -> str:
        """Hosts see the machine's toolchain at the same path (the docker backend mounts it there)."""
        return str(self.layout.binary(name))

    def release_binary(self, component: Component | str, version: Version) -> str:
        """From the toolchain cache, which hosts see at the same path (as tool_path)."""
        name = component_name(component)
        chain = Toolchain(etcd=str(version)) if name == "etcd" else Toolchain(str(version))
        return str(chain.path(name))

    def install_release(self, component: Component | str, host: str, version: Version) -> str:
        """The hosts' package manager is Quorum's (harness/backends/process/packages.py)."""
        return install_release(self, component_name(component), host, version)

    def supervisor_events(self) -> Path:
        return self.run_dir / "events.jsonl"

    # ---- what the configuration promises ---------------------------------------------------------

    def load_balancer_check(self) -> HealthCheck | None:
        check = self.topology.load_balancer.health_check
        return check if self.topology.load_balancer_host is not None and check.enabled else None

    # ---- network -------------------------------------------------------------------------------

    def address(self, host: str) -> str | None:
        return str(self.topology.address_of(self.topology.host(host)))

    def link(self, host: str) -> str:
        return host_link(self.netns(host))

    def baseline_link_mbit(self, host: str) -> float | None:
        return self.topology.network.link_rate_mbit

    # ---- what faults leave -----------------------------------------------------------------------

    def sweep(self, keep: frozenset[str] = frozenset()) -> list[str]:
        done = []
        for pid in pids_in_netns([self.netns(h) for h in self.hosts()]):
            if self.process_state("", pid) == "T":
                send(pid, signals.SIGCONT)
                done.append(f"resumed pid {pid}")
        for component_id in self.specs:
            component, host = component_id.split("@", 1)
            if component_id in keep:
                done.append(f"left {component_id} as it is (its heal found restoring it unsafe)")
            else:
                done += self.keeper(component).sweep(host)
        return done

    def kubectl(self, *args: str, timeout: float = 30.0) -> str:
        return run([str(self.layout.binary("kubectl")), f"--kubeconfig={self.admin_kubeconfig}", *args], timeout=timeout)

