"""`quorum up --backend kind`: a kind topology (clusters/kind.yaml) brought up from the local images and
waited on until it is healthy; a failed start-up is torn down. `quorum down` is process.down (it knows kind)."""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

from harness.backends.docker.engine import ensure_engine
from harness.errors import ClusterError
from harness.backends.kind import cluster as kind
from harness.backends.kind import defects
from harness.backends.kind.handle import KindCluster
from harness.backends.kind.topology import load_kind_topology
from harness.run.state import RunState, register

READY_TIMEOUT_S = 300.0  # after `kind create` returned: the CNI DaemonSet, every node Ready, both leases


def up(topology_file: Path, run_dir: Path | None = None, say=lambda _: None,
       timeout_s: float = READY_TIMEOUT_S) -> KindCluster:
    from harness.backends.process import up as process  # down() handles every backend; imported late (it imports docker)

    process.require_root("up")
    topology = load_kind_topology(topology_file)
    run_dir = (run_dir or process.default_run_dir(topology.name)).resolve()
    if (run_dir / "state.json").exists():
        old = RunState.load(run_dir)
        raise ClusterError(f"{run_dir} already holds cluster {old.name} (run {old.run_id}, {old.status})",
                           f"quorum down {run_dir}   (or `quorum down --all` for every leftover)")
    started = time.monotonic()
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    shutil.copyfile(topology_file, run_dir / "topology.yaml")
    state = RunState(run_id=secrets.token_hex(3), name=topology.name, backend="kind", run_dir=str(run_dir))
    state.save()
    register(state)
    try:
        engine = ensure_engine()
        shape = kind.KindShape(topology.kind.control_planes, topology.kind.workers)
        kind.create(engine, state, topology.network.subnet, shape, say=lambda line: say(f"run {state.run_id}: {line}"))
        cluster = KindCluster(run_dir)
        for done in defects.apply(cluster):
            say(f"run {state.run_id}: defect: {done}")
        problems = cluster.problems_after(timeout_s)
        if problems:
            raise ClusterError(f"kind cluster {topology.name} not healthy {timeout_s:.0f}s after creation: "
                               f"{'; '.join(problems)}{_kubelet_errors(cluster, problems)}",
                               f"the kubelet journals of nodes that are not Ready are in {run_dir / 'logs'}; "
                               "kind-create.log is in the run directory")
    except BaseException:
        say(f"run {state.run_id}: start-up failed, tearing down")
        process.down(run_dir, keep_logs=True)
        raise
    state.status = "ready"
    state.save()
    say(f"run {state.run_id}: ready in {time.monotonic() - started:.1f}s")
    return cluster


def _kubelet_errors(cluster: KindCluster, problems: list[str], lines: int = 5) -> str:
    """The last error lines of the kubelet of each node that is not Ready; each journal's tail is kept in the
    run's logs/ (the nodes themselves are removed with the failed start)."""
    from harness.backends.process.up import error_lines  # late, as in up()
    from harness.report.redact import redact

    parts = []
    for short in cluster.nodes():
        if not any(problem.startswith(f"node {short} not Ready") for problem in problems):
            continue
        journal = redact(cluster.exec(short, ["journalctl", "-u", "kubelet", "--no-pager", "-n", "400"], check=False))
        log = cluster.log_path(f"kubelet@{short}")
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(journal)
        parts.append(f"\n  kubelet@{short}:" + "".join(f"\n    {line[:300]}" for line in error_lines(journal, lines)))
    return "".join(parts)
