"""A fake target: a cluster that exists only as a model in its run directory (fake.json).

It lets unit tests drive faults, the journal, `quorum heal` and the scenario helpers through the real protocol
without a cluster: components have pids that a SIGKILL replaces (the cluster's own self-healing), holds, command
lines and overrides; hosts have power, firewall rules and links; etcd has members and a leader. Every call that
changes something is recorded in the model's `calls`. It is a test double, never a verdict's evidence.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.backends.fake.clients import ModelClients
from harness.backends.fake.health import ModelHealth
from harness.backends.fake.keeper import FakeKeeper
from harness.backends.fake.network import ModelNetwork
from harness.backends.fake.power import ModelPower
from harness.run.state import RunState
from harness.target.capabilities import Capability
from harness.target.hosts import Ran
from harness.target.health import LEASES
from harness.target.protocol import HostRole, Target, component_name
from harness.toolchain.versions import ETCD_VERSION, Version
from harness.topology import Component, HealthCheck, Role, Topology, load_topology

MODEL = "fake.json"


_MODEL_LOCK = threading.RLock()


class FakeTarget(ModelClients, Target):
    BACKEND_NAME = "fake"
    topology: Topology
    health_poll_s = 0.0
    poll_interval_s = 0.0
    settle_s = 0.0

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.state = RunState.load(self.run_dir)
        self.topology = load_topology(self.run_dir / "topology.yaml")

    # What the model models: every fault's operations, not what only a real cluster has (its supervisor's record, its
    # files, pods, hollow nodes, iperf3, a shape that changes); the network, whole hosts, the load balancer's view and
    # holds and overrides are its parts'
    KEEPERS = (FakeKeeper,)
    CAPABILITIES = frozenset(Capability) - {Capability.SUPERVISOR, Capability.RUN_FILES, Capability.HOLLOW_NODES,
                                            Capability.HOST_BANDWIDTH, Capability.PODS, Capability.NODES,
                                            Capability.STATIC_PODS,
                                            Capability.SCALE, Capability.NODE_POWER, Capability.NODE_DISCONNECT,
                                            Capability.NETWORK, Capability.SHAPE, Capability.LB_ADMIN,
                                            Capability.SIGNAL, Capability.HOLD, Capability.OVERRIDE_ARGS,
                                            Capability.SELF_HOSTED}
    NETWORK = ModelNetwork
    POWER = ModelPower
    HEALTH = ModelHealth

    # ---- the model -----------------------------------------------------------------------------

    @staticmethod
    def initial_model(topology: Topology) -> dict[str, Any]:
        pids = itertools.count(1000)

        def argv(component: Component, host) -> list[str]:
            if component is Component.APISERVER:
                servers = ",".join(f"https://{topology.address_of(h)}:2379" for h in topology.etcd_hosts)
                return [component.value, f"--bind-address={topology.address_of(host)}", f"--etcd-servers={servers}"]
            if component is not Component.ETCD:
                return [component.value, f"--bind-address={topology.address_of(host)}"]
            return ["etcd", f"--name={host.name}", f"--initial-advertise-peer-urls=https://{topology.address_of(host)}:2380",
                    "--initial-cluster-token=fake", "--initial-cluster-state=new"]

        components = {f"{c.value}@{h.name}": {"pid": next(pids), "held": False, "override": None, "state": "R",
                                              "restarts": 0, "argv": argv(c, h)}
                      for h in topology.hosts for c in topology.components_on(h)}
        etcd = [h.name for h in topology.etcd_hosts]
        controllers = [h.name for h in topology.controllers]
        return {"next_pid": next(pids), "components": components, "calls": [], "revision": 1,
                "hosts": {h.name: {"power": "on", "connected": True, "link": topology.network.link_rate_mbit,
                                   "rules": []} for h in topology.hosts},
                "etcd_members": {h: i + 1 for i, h in enumerate(etcd)}, "etcd_leader": etcd[0] if etcd else None,
                "leases": {lease: f"{controllers[0]}_fake" for lease in LEASES} if controllers else {}}

    def model(self) -> dict[str, Any]:
        with _MODEL_LOCK:
            return json.loads((self.run_dir / MODEL).read_text())

    @contextlib.contextmanager
    def changing(self) -> Iterator[dict[str, Any]]:
        """One change at a time (a batch of faults acts from several threads at once)."""
        with _MODEL_LOCK:
            model = self.model()
            yield model
            (self.run_dir / MODEL).write_text(json.dumps(model, indent=1))

    def calls(self) -> list[list[Any]]:
        return self.model()["calls"]

    def entry(self, model: dict, component: Component | str, host: str) -> dict:
        key = f"{component_name(component)}@{host}"
        if key not in model["components"]:
            raise KeyError(f"no component {key!r}; components: {', '.join(model['components'])}")
        return model["components"][key]

    @staticmethod
    def start(model: dict, entry: dict, component_id: str = "") -> None:
        entry["pid"], entry["state"] = model["next_pid"], "R"
        model["next_pid"] += 1
        component, _, host = component_id.partition("@")
        if model["leases"].get(component, "").startswith(f"{host}_"):  # a restarted holder's successor holds it
            model["leases"][component] = f"{host}_{entry['pid']}"

    # ---- identity ------------------------------------------------------------------------------

    def hosts(self, role: str | None = None) -> list[str]:
        if role == HostRole.ETCD:
            return [h.name for h in self.topology.etcd_hosts]
        roles = {HostRole.CONTROLLER: Role.CONTROLLER, HostRole.WORKER: Role.NODES, HostRole.LOADBALANCER: Role.LOADBALANCER}
        return [h.name for h in self.topology.hosts if role is None or roles.get(role) in h.roles]

    def component_hosts(self, component: Component | str) -> list[str]:
        wanted = Component(component_name(component))
        return [h.name for h in self.topology.hosts if wanted in self.topology.components_on(h)]

    # ---- commands and files --------------------------------------------------------------------

    def run(self, host: str, argv: list[str], *, timeout: float = 60.0) -> Ran:
        """Recorded; `echo` echoes, `false` fails, and etcdctl's snapshot save leaves a file, as they would."""
        with self.changing() as model:
            model["calls"].append(["exec", host, list(argv)])
        if "snapshot" in argv and "save" in argv:
            Path(argv[argv.index("save") + 1]).write_bytes(b"fake etcd snapshot")
        if argv[:1] == ["false"]:
            return Ran(tuple(argv), 1, "", "")
        if argv[1:] == ["--help"]:  # every release takes every flag the model's components run with
            return Ran(tuple(argv), 0, "".join(f"      {flag.split('=')[0]} string\n"
                                                for c in self.model()["components"].values()
                                                for flag in c["argv"][1:]), "")
        return Ran(tuple(argv), 0, " ".join(argv[1:]) + "\n" if argv[:1] == ["echo"] else "", "")

    def put_file(self, host: str, path: str, text: str) -> None:
        with self.changing() as model:
            model["calls"].append(["put_file", host, path])

    def process_state(self, host: str, pid: int) -> str | None:
        entry = next((c for c in self.model()["components"].values() if c["pid"] == pid), None)
        return entry["state"] if entry else None

    def process_started(self, host: str, pid: int) -> str | None:
        entry = next((c for c in self.model()["components"].values() if c["pid"] == pid), None)
        return entry.get("started", f"start-{pid}") if entry else None

    # ---- components ----------------------------------------------------------------------------

    def pid(self, component: Component | str, host: str) -> int | None:
        return self.entry(self.model(), component, host)["pid"]

    def signal(self, component: Component | str, host: str, signal: str, *, pid: int | None = None) -> None:
        with self.changing() as model:
            model["calls"].append(["signal", f"{component_name(component)}@{host}", signal, pid])
            entry = self.entry(model, component, host)
            if pid is not None and entry["pid"] != pid:
                return  # that process is gone
            if signal == "SIGSTOP":
                entry["state"] = "T"
            elif signal == "SIGCONT":
                entry["state"] = "R"
            elif entry["pid"] is not None:  # it exits; the cluster's self-healing starts it again unless held
                entry["pid"] = None
                if not entry["held"] and self.model_host_on(model, host):
                    self.start(model, entry)
                    entry["restarts"] += 1

    @staticmethod
    def model_host_on(model: dict, host: str) -> bool:
        return model["hosts"][host]["power"] == "on"

    def keeper(self, component: Component | str) -> FakeKeeper:
        return FakeKeeper(self, Component(component_name(component)))

    def running_command_line(self, component: Component | str, host: str) -> list[str]:
        entry = self.entry(self.model(), component, host)
        return list(entry["override"] or entry["argv"])

    def running_argv(self, component: Component | str, host: str) -> list[str] | None:
        return self.running_command_line(component, host) if self.pid(component, host) is not None else None

    def running_version(self, component: Component | str, host: str) -> Version | None:
        """The configured release, or the one release_binary's path names."""
        path = (self.running_argv(component, host) or [""])[0].split("/")
        configured = ETCD_VERSION if component_name(component) == "etcd" else self.topology.kubernetes
        return None if path == [""] else Version.parse(path[-2] if len(path) > 2 else configured)

    def release_binary(self, component: Component | str, version: Version) -> str:
        return f"/fake/releases/{version}/{component_name(component)}"

    def ensure_running(self, component: Component | str, host: str) -> None:
        with self.changing() as model:
            entry = self.entry(model, component, host)
            if entry["pid"] is None and not entry["held"]:
                self.start(model, entry)

    def live_flags(self, component: Component | str) -> dict[str, dict[str, str]]:
        from harness.components.flags import parse_flags

        return {h: parse_flags(self.running_command_line(component, h)[1:]) for h in self.component_hosts(component)}

    def load_balancer_check(self) -> HealthCheck:
        return self.topology.load_balancer.health_check

    def etcd_data_dir(self, host: str) -> str:
        return str(self.run_dir / "data" / host / "etcd")

    def tool_path(self, name: str) -> str:
        return f"/fake/bin/{name}"

    # ---- network and hosts ---------------------------------------------------------------------

    def address(self, host: str) -> str | None:
        return str(self.topology.address_of(self.topology.host(host)))

    def link(self, host: str) -> str:
        return "eth0"

    # ---- what faults leave -----------------------------------------------------------------------

    def sweep(self, keep: frozenset[str] = frozenset()) -> list[str]:
        done = []
        for key in self.model()["components"]:
            if key not in keep:
                component, host = key.split("@", 1)
                done += self.keeper(component).sweep(host)
        return done
