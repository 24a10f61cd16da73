"""The process backend's side of Capability.SCALE (harness/target/scale.py). The run directory's topology.yaml is the
cluster's current shape: a join makes a spare host a controller there, a retirement makes it a spare again, and every
target loaded from the run directory afterwards sees the new shape. A spare's certificates, kubeconfigs and its
network namespace exist from the build (harness/pki.py), so a join writes only its components' keepers."""

from __future__ import annotations

import dataclasses
import os
import signal

import yaml

from harness.backends.process.keepers import start_keepers, write_keeper
from harness.backends.process.supervisor import Control
from harness.clients.haproxy_admin import BACKEND, admin_command
from harness.components import ComponentSpec
from harness.components import haproxy as haproxy_component
from harness.errors import FaultError
from harness.target.scale import Scalable
from harness.topology import Component, Role, load_topology, parse_topology
from harness.wait import until

ETCD_JOINS = ("--initial-cluster-state=new", "--initial-cluster-state=existing")
KEEPER_WAIT_S = 15.0  # a keeper process up, or gone after SIGTERM (its component is held, so nothing to stop)


class Membership(Scalable):
    """Mixed into ProcessTarget, whose run directory, topology and keepers it uses."""

    KEEPERS_IN_HOSTS = False  # keepers run on this machine, each entering its host's network namespace

    def start_keepers_on(self, host: str, specs: list[ComponentSpec]) -> None:
        """Start the keepers of a joined host's components (the docker backend starts them inside its container)."""
        start_keepers(self.run_dir, specs)

    def spare_hosts(self) -> list[str]:
        return [h.name for h in self.topology.spares]

    def join_host(self, host: str) -> None:
        if host in self.hosts("controller"):  # a retirement that stopped half-way: it stays, its member joins anew
            self._reshape(host, Role.CONTROLLER)
            # the line of the current shape: etcd checks a joining member's --initial-cluster against its member list
            joining = [a.replace(*ETCD_JOINS) for a in self.spec(Component.ETCD, host).argv]
            control = self._control(Component.ETCD, host)
            dataclasses.replace(control.spec(), argv=joining).save(control.dir)
            return
        if host not in self.spare_hosts():
            raise FaultError(f"{host} is not a spare host of {self.topology.name} (spares: "
                             f"{', '.join(self.spare_hosts()) or 'none'})",
                             "give a host with roles: [spare] in the topology (clusters/ha3-scale.yaml has two)")
        self._reshape(host, Role.CONTROLLER)
        specs = [spec for spec in self.specs.values() if spec.host == host]
        for spec in specs:
            if spec.component == Component.ETCD:  # a new member joins the running cluster instead of founding one
                spec = dataclasses.replace(spec, argv=[a.replace(*ETCD_JOINS) for a in spec.argv])
            write_keeper(self.run_dir, self.state, spec, in_container=self.KEEPERS_IN_HOSTS,
                         cluster_topology=self.topology)
            Control(self.run_dir / "components" / spec.id).hold()  # started one by one by whoever joins it
        self.start_keepers_on(host, specs)
        until(lambda: all(self.keeper_pid(spec.id) is not None for spec in specs), KEEPER_WAIT_S)
        missing = [spec.id for spec in specs if self.keeper_pid(spec.id) is None]
        if missing:  # said here, not later as a member etcd never promoted
            raise FaultError(f"the keepers of {', '.join(missing)} did not start within {KEEPER_WAIT_S:g} s",
                             f"read {self.run_dir / 'logs'}, then quorum heal {self.run_dir}")

    def drain_host(self, host: str) -> None:
        if host not in self.hosts("controller"):
            raise FaultError(f"{host} is not a controller of {self.topology.name}", "name a controller to retire")
        self._reshape(host, Role.CONTROLLER, retiring=True)

    def retire_host(self, host: str) -> None:
        if host not in self.hosts("controller") or not self.topology.host(host).retiring:
            raise FaultError(f"{host} is not a leaving controller of {self.topology.name}",
                             "drain it first (Scalable.drain_host)")
        ids = [cid for cid, spec in self.specs.items() if spec.host == host]
        running = [cid for cid in ids if self.control(cid).child_pid() is not None or not self.control(cid).held()]
        if running:
            raise FaultError(f"{host} still runs {', '.join(running)}", "hold each of its components first")
        for cid in ids:
            pid = self.keeper_pid(cid)
            if pid is not None:
                os.kill(pid, signal.SIGTERM)
                until(lambda: self.keeper_pid(cid) is None, KEEPER_WAIT_S)
        for cid in ids:
            control = self.run_dir / "components" / cid
            for path in sorted(control.glob("*"), reverse=True) if control.is_dir() else []:
                path.unlink()
            if control.is_dir():
                control.rmdir()
        self.exec(host, ["rm", "-rf", "--", str(self.layout.data_dir(host) / "etcd")])
        self._reshape(host, Role.SPARE)

    def reconfigure(self, component: Component | str, host: str) -> bool:
        control = self._control(component, host)
        keeper = control.spec()
        configured = self.spec(component, host).argv
        if keeper.argv == configured:
            return False
        dataclasses.replace(keeper, argv=configured).save(control.dir)
        self.restore_command_line(component, host)  # restarts it if its running line differs
        return True

    def lb_rotation(self, host: str, serving: bool) -> None:
        lb = self.topology.load_balancer_host
        if lb is None:
            raise FaultError(f"{self.topology.name} has no load balancer", "add a host with roles: [loadbalancer]")
        if host not in self.hosts("controller") + self.spare_hosts():  # the name goes into an admin command
            raise FaultError(f"{host} is neither a controller nor a spare host of {self.topology.name}")
        socket = haproxy_component.admin_socket(self.layout, lb)
        admin_command(socket, f"{'enable' if serving else 'disable'} server {BACKEND}/{host}")

    def _reshape(self, host: str, role: Role, retiring: bool = False) -> None:
        """The run's topology with `host` given `role` (and leaving or not), validated, written in one step, and this
        target reloaded; the load balancer's configuration file follows (for its next start: its running rotation is
        lb_rotation's)."""
        path = self.run_dir / "topology.yaml"
        data = yaml.safe_load(path.read_text())
        for entry in data["hosts"]:
            if entry["name"] == host:
                entry["roles"] = [role.value]
                entry.pop("retiring", None)
                if retiring:
                    entry["retiring"] = True
        parse_topology(data, str(path))  # refused before anything is written
        temporary = path.with_name("topology.yaml.tmp")
        temporary.write_text(yaml.safe_dump(data, sort_keys=False))
        os.replace(temporary, path)
        self.topology = load_topology(path)
        self.layout = dataclasses.replace(self.layout, topology=self.topology)
        for derived in ("specs", "etcd"):  # cached from the shape before (the components, etcd's members)
            self.__dict__.pop(derived, None)
        lb = self.topology.load_balancer_host
        if lb is not None:
            for file, content in self.spec(Component.HAPROXY, lb.name).files.items():
                file.write_text(content)
