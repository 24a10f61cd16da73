"""The kind backend's entry point (harness/backends/registry.py): a kind topology (clusters/kind.yaml) brought up
from the images built here, waited on until it is healthy; a failed start-up is torn down."""

from __future__ import annotations

import time
from pathlib import Path

from harness.backends.common import default_run_dir, error_lines, require_root, start_run
from harness.backends.docker import hosts as docker_hosts
from harness.backends.docker.engine import ensure_engine
from harness.backends.kind import cluster as kind
from harness.backends.kind import checkpointer, defects, load_balancer, self_hosted
from harness.backends.kind.images import build_checkpointer
from harness.backends.kind.target import KindTarget
from harness.backends.kind.topology import KindTopology, load_kind_topology
from harness.errors import ClusterError
from harness.run.state import RunState
from harness.target.capabilities import Capability
from harness.target.backend import Backend, Say

READY_TIMEOUT_S = 300.0  # after `kind create` returned: the CNI DaemonSet, every node Ready, both leases


class KindBackend(Backend):
    name = "kind"
    summary = "kind's nodes; the control plane as kubeadm's static pods (needs a kind topology)"
    default_topology = "clusters/kind.yaml"
    target_class = KindTarget

    def load_topology(self, path: Path) -> KindTopology:
        return load_kind_topology(path)

    def topology_lacks(self, topology: KindTopology, *needed: Capability) -> str | None:
        """A kind cluster's control plane is either kubeadm's static pods or self-hosted (kind.self_hosted)."""
        if Capability.SELF_HOSTED in needed and not topology.kind.self_hosted:
            return (f"it needs {Capability.SELF_HOSTED.value} ({Capability.SELF_HOSTED.meaning}); {topology.name} is "
                    "kubeadm's static pods: use a kind topology with kind.self_hosted: true "
                    "(clusters/kind-self-hosted.yaml)")
        if Capability.STATIC_PODS in needed and topology.kind.self_hosted:
            return (f"it needs {Capability.STATIC_PODS.value} ({Capability.STATIC_PODS.meaning}); {topology.name} is "
                    "self-hosted (only etcd is a static pod)")
        return None

    def describe(self, topology: KindTopology) -> dict[str, str]:
        nodes = topology.kind
        return {"cluster": "kind", "nodes": f"{nodes.control_planes} control planes, {nodes.workers} workers"}

    def up(self, topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
           timeout_s: float | None = None) -> KindTarget:
        from harness.backends import registry  # down() goes through the registry, which names this module

        require_root("up")
        timeout_s = timeout_s or READY_TIMEOUT_S
        topology = load_kind_topology(topology_file)
        run_dir = (run_dir or default_run_dir(topology.name)).resolve()
        started = time.monotonic()
        state = start_run(topology_file, run_dir, topology.name, self.name)
        tell = lambda line: say(f"run {state.run_id}: {line}")  # noqa: E731
        try:
            engine = ensure_engine()
            shape = kind.KindShape(topology.kind.control_planes, topology.kind.workers, topology.kind.self_hosted,
                                   topology.checkpointer, topology.kubernetes)
            kind.create(engine, state, topology.network.subnet, shape, say=tell,
                        hardened=not topology.defects.kubeadm_defaults,
                        defects=tuple(defects.kubeadm_patches(topology.defects)))
            cluster = KindTarget(run_dir)
            tell(load_balancer.configure(cluster))
            if topology.kind.self_hosted:
                self_hosted.pivot(cluster, say=tell)
            if topology.checkpointer:
                checkpointer.install(cluster, build_checkpointer(engine), say=tell,
                                     args=checkpointer.defect_args(topology.defects))
            for done in defects.apply(cluster):
                tell(f"defect: {done}")
            problems = cluster.health.problems_after(timeout_s)
            if problems:
                raise ClusterError(f"kind cluster {topology.name} not healthy {timeout_s:.0f}s after creation: "
                                   f"{'; '.join(problems)}{_kubelet_errors(cluster, problems)}",
                                   f"the kubelet journals of nodes that are not Ready are in {run_dir / 'logs'}; "
                                   "kind-create.log is in the run directory")
        except BaseException:
            tell("start-up failed, tearing down")
            registry.down(run_dir, keep_logs=True)
            raise
        state.status = "ready"
        state.save()
        tell(f"ready in {time.monotonic() - started:.1f}s")
        return cluster

    def teardown(self, state: RunState) -> list[str]:
        return kind.teardown(state)  # the nodes first: the network cannot go while they use it

    def reclaim(self, run_id: str) -> list[str]:
        return kind.remove_nodes(kind.cluster_name(run_id)) if docker_hosts.engine_answers() else []

    def leftovers(self) -> list[str]:
        return kind.remove_nodes() if docker_hosts.engine_answers() else []


def _kubelet_errors(cluster: KindTarget, problems: list[str], lines: int = 5) -> str:
    """The last error lines of the kubelet of each node that is not Ready; each journal's tail is kept in the
    run's logs/ (the nodes themselves are removed with the failed start)."""
    from harness.report.redact import redact

    parts = []
    for short in cluster.hosts():
        if not any(problem.startswith(f"node {short} not Ready") for problem in problems):
            continue
        journal = redact(cluster.exec(short, ["journalctl", "-u", "kubelet", "--no-pager", "-n", "400"], check=False))
        log = cluster.run_dir / "logs" / f"kubelet@{short}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(journal)
        parts.append(f"\n  kubelet@{short}:" + "".join(f"\n    {line[:300]}" for line in error_lines(journal, lines)))
    return "".join(parts)


BACKEND = KindBackend()
