"""The remote backend's entry point (harness/backends/registry.py), reached with `pytest scenarios/ --target FILE`,
not `--backend`: it builds nothing. `up` opens the inventory's cluster: every piece must answer as
`quorum inventory check` sees it, before anything acts; `teardown` removes only Quorum's local copies of the
credentials, never anything on the cluster."""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from harness.backends.common import check_run_dir, default_run_dir, start_run
from harness.remote import hollow_fleet
from harness.remote.credentials import api_credentials
from harness.backends.remote.target import INVENTORY, RemoteTarget
from harness.errors import ClusterError, QuorumError
from harness.inventory.check import check
from harness.inventory.load import load_inventory, local_path
from harness.inventory.model import Inventory
from harness.run.state import RunState
from harness.target.backend import Backend, Say
from harness.target.capabilities import Capability
from harness.topology import Component

if TYPE_CHECKING:
    from harness.faults.sweep import HealReport


def with_absolute_paths(inventory: Inventory, base: Path) -> dict:
    """The inventory as data, each path on this machine made absolute (the run directory's copy is read from there)."""
    data = inventory.model_dump(mode="json", exclude_none=True)

    def absolute(section: dict, key: str) -> None:
        if section.get(key):
            section[key] = str(local_path(section[key], base).resolve())

    absolute(data["kubeconfig"], "path")
    absolute(data["ssh"], "key_file")
    absolute(data["ssh"], "known_hosts")
    for host in data["hosts"]:
        absolute(host.get("ssh", {}), "key_file")
    if inventory.etcd and not inventory.etcd.on_hosts:
        for key in ("ca", "cert", "key"):
            absolute(data["etcd"], key)
    return data


class RemoteBackend(Backend):
    name = "remote"
    summary = "a cluster Quorum did not build, from an inventory (pytest --target FILE)"
    default_topology = "docs/examples/staging-inventory.yaml"
    target_class = RemoteTarget
    public = False  # chosen with --target, never built by `quorum up`
    builds = False

    def load_topology(self, path: Path) -> Inventory:
        return load_inventory(path)

    def topology_lacks(self, topology: Inventory, *needed: Capability) -> str | None:
        """What the inventory keeps from a scenario: hollow nodes it asks none of; objects of Quorum's own in the
        API on a target that allows none (neither disposable nor work_probes); and kubeadm's static pods, which
        someone else's control plane is only where the inventory says its kube-apiserver runs as one (the
        static-pod suite kills it, corrupts its manifest and waits for its kubelet)."""
        if Capability.HOLLOW_NODES in needed and topology.hollow_nodes is None:
            return (f"it needs {Capability.HOLLOW_NODES.value} ({Capability.HOLLOW_NODES.meaning}); {topology.name}'s "
                    "inventory asks for none (hollow_nodes: {count: N} on a disposable target, docs/target.md)")
        if Capability.WORK_PROBES in needed and not (topology.disposable or topology.work_probes):
            return (f"it needs {Capability.WORK_PROBES.value} ({Capability.WORK_PROBES.meaning}); {topology.name}'s "
                    "inventory allows none (work_probes: true lets Quorum create and delete them, docs/target.md)")
        apiserver = topology.components.get(Component.APISERVER)
        if Capability.STATIC_PODS in needed and (apiserver is None or apiserver.runs_as != "static-pod"):
            how = apiserver.runs_as if apiserver is not None else "not described"
            return (f"it needs {Capability.STATIC_PODS.value} ({Capability.STATIC_PODS.meaning}); {topology.name}'s "
                    f"inventory says kube-apiserver runs as {how}")
        return None

    def describe(self, topology: Inventory) -> dict[str, str]:
        return {"target": topology.name, "api_endpoint": topology.api_endpoint,
                "disposable": str(topology.disposable).lower()}

    def destructive_refusal(self, topology: Inventory) -> str | None:
        refusal = super().destructive_refusal(topology)
        if refusal:
            return refusal
        unkept = [c.value for c, runs in topology.components.items() if runs.runs_as == "process"]
        if unkept:
            return (f"the inventory says {', '.join(unkept)} run(s) as a plain process, which nothing Quorum knows "
                    "restarts, so the destructive scenarios could neither keep it down nor change its flags; describe "
                    "each as a static pod or a systemd unit (docs/target.md)")
        return None

    def up(self, topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
           timeout_s: float | None = None) -> RemoteTarget:
        """Open the inventory's cluster; ClusterError naming each piece that did not answer, with its fix."""
        topology_file = Path(topology_file)
        inventory = load_inventory(topology_file)
        run_dir = (run_dir or default_run_dir(inventory.name)).resolve()
        check_run_dir(run_dir)
        if (run_dir / "state.json").exists():
            raise ClusterError(f"{run_dir} already holds a run", f"quorum down {run_dir}")
        say(f"checking every piece of {inventory.name} (API, SSH to {len(inventory.hosts)} hosts, etcd)")
        base = topology_file.resolve().parent
        failed = [row for row in check(inventory, base) if not row.ok]
        if failed:
            raise ClusterError(f"{topology_file}: target {inventory.name} is not as its inventory says, so nothing "
                               "runs against it:\n" + "\n".join(f"  - {row.piece}: {row.detail}" +
                                                                (f" (fix: {row.fix})" if row.fix else "")
                                                                for row in failed),
                               f"quorum inventory check {topology_file} shows every piece")
        with tempfile.TemporaryDirectory(prefix="quorum-credentials-") as scratch:
            api_credentials(inventory, base, Path(scratch))  # refused (exec plugins, no CA) before anything is kept
        state = start_run(topology_file, run_dir, inventory.name, self.name)
        # the copy start_run made, with every local path absolute: the target reads it from the run directory
        (run_dir / INVENTORY).write_text(yaml.safe_dump(with_absolute_paths(inventory, base), sort_keys=False))
        target = RemoteTarget(run_dir)
        if inventory.hollow_nodes is not None:
            try:
                hollow_fleet.start(target.api, target.admin_kubeconfig, run_dir, state.run_id, inventory.hollow_nodes,
                                   say)
            except BaseException:
                from harness.backends import registry

                target.close()
                try:
                    registry.down(run_dir)  # the fleet's kwok and nodes, as far as they got, and the registration
                except QuorumError:
                    pass  # the start's own error says what went wrong; `quorum down` tries the rest again
                raise
        state.status = "ready"
        state.save()
        return target

    def open_unchecked(self, topology_file: Path, run_dir: Path) -> RemoteTarget:
        """The inventory's target in a private run directory, without the check `up` makes first: a heal must reach
        a cluster whose components a dead harness left held. The run is not registered: nothing on this machine
        belongs to it."""
        topology_file = Path(topology_file)
        inventory = load_inventory(topology_file)
        run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        RunState(run_id=secrets.token_hex(3), name=inventory.name, backend=self.name, run_dir=str(run_dir.resolve()),
                 status="ready").save()
        data = with_absolute_paths(inventory, topology_file.resolve().parent)
        (run_dir / INVENTORY).write_text(yaml.safe_dump(data, sort_keys=False))
        return RemoteTarget(run_dir)

    def heal_from_hosts(self, inventory_file: Path, force: bool = False) -> "HealReport":
        """`quorum heal --target FILE` (harness/backends/remote/heal.py)."""
        from harness.backends.remote.heal import heal_hosts

        with tempfile.TemporaryDirectory(prefix="quorum-heal-") as scratch:
            target = self.open_unchecked(Path(inventory_file), Path(scratch) / "run")
            try:
                return heal_hosts(target, force)
            finally:
                target.close()

    def teardown(self, state: RunState) -> list[str]:
        """Nothing on the cluster but the run's hollow nodes (and the kwok controller on this machine that plays
        them): the cluster is someone else's. The run's local credential copies go with its data."""
        run_dir = Path(state.run_dir)
        if hollow_fleet.Fleet.load(run_dir) is None:
            return []
        target = RemoteTarget(run_dir)
        try:
            done, failed = hollow_fleet.stop(target.api, run_dir)
        finally:
            target.close()
        if failed:
            raise ClusterError(f"the run's hollow nodes could not all be deleted: {'; '.join(failed)}",
                               f"quorum down {run_dir} tries again once the API answers; quorum heal --target "
                               "FILE deletes those whose kwok controller is gone")
        return done


BACKEND = RemoteBackend()
