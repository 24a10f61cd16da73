"""The process backend: each host a network namespace on a Quorum bridge, components under keepers.

`up` returns a Cluster only when the control plane is really usable: /readyz through the load
balancer answers 200, every etcd member is healthy over TLS, and both leader leases have a holder.
Otherwise it tears down what it started and raises a ClusterError carrying the log lines that explain.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from harness.load import hollow
from harness.backends.process import defects
from harness.backends.docker import hosts as docker
from harness.net import netns
from harness.backends.process.target import Cluster, environment_for_keepers, layout_for
from harness.components import ComponentSpec, binaries_for, specs_for
from harness.errors import ClusterError, ToolchainError
from harness.pki import write_kubeconfig
from harness.shell import run
from harness.run.state import RunState, register, registered_runs, unregister
from harness.backends.process.supervisor import KeeperSpec
from harness.topology import Topology, load_topology

READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0

Say = Callable[[str], None]


def require_root(action: str) -> None:
    if os.geteuid() != 0:
        raise ClusterError(
            f"{action} needs root: it creates network namespaces, a bridge and iptables rules",
            f"run it as root (sudo quorum {action})",
        )


def default_run_dir(name: str) -> Path:
    """Where a topology named `name` runs unless told otherwise (every backend)."""
    return Path("reports") / "clusters" / name


BACKENDS = ("process", "docker")


def up(topology_file: Path, run_dir: Path | None = None, say: Say = lambda _: None,
       timeout_s: float = READY_TIMEOUT_S, backend: str = "process") -> Cluster:
    """Bring a topology up with the process backend (hosts are network namespaces) or the docker backend
    (hosts are containers); both run the same components under the same supervisor."""
    if backend not in BACKENDS:
        raise ClusterError(f"unknown backend {backend!r}", f"use one of: {', '.join(BACKENDS)}")
    require_root("up")
    topology = load_topology(topology_file)
    run_dir = (run_dir or default_run_dir(topology.name)).resolve()
    if (run_dir / "state.json").exists():
        old = RunState.load(run_dir)
        raise ClusterError(
            f"{run_dir} already holds cluster {old.name} (run {old.run_id}, {old.status})",
            f"quorum down {run_dir}   (or `quorum down --all` for every leftover)",
        )
    layout = layout_for(topology, run_dir)
    _require_binaries(layout, binaries_for(topology))
    specs = specs_for(layout)
    started = time.monotonic()
    run_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(run_dir, 0o700)
    shutil.copyfile(topology_file, run_dir / "topology.yaml")
    state = RunState(run_id=secrets.token_hex(3), name=topology.name, run_dir=str(run_dir), backend=backend,
                     components=[spec.id for spec in specs])
    state.save()
    register(state)
    try:
        say(f"run {state.run_id}: PKI")
        _write_pki(topology, layout)
        defects.after_pki(topology, layout)
        in_containers = backend == "docker"
        if in_containers:
            hosts = docker.ContainerHosts(state)
            say(f"run {state.run_id}: docker network {topology.network.subnet} on bridge {docker.bridge_name(state.run_id)}")
            hosts.create(topology, lambda line: say(f"run {state.run_id}: {line}"))
        else:
            say(f"run {state.run_id}: network {topology.network.subnet} on bridge {netns.bridge_name(state.run_id)}")
            network = netns.RunNetwork(state.run_id, topology.network.subnet, state.record)
            network.create([(h.name, topology.address_of(h)) for h in topology.hosts], topology.network.link_rate_mbit)
            defects.after_network(topology, state.run_id)
        say(f"run {state.run_id}: starting {len(specs)} components")
        for spec in specs:
            _start_keeper(run_dir, state, spec, in_container=in_containers)
        if in_containers:
            hosts.start(topology, run_dir, specs)  # each container starts its keepers
            defects.after_network(topology, state.run_id)
        cluster = Cluster(run_dir)
        _wait_ready(cluster, say, timeout_s)
        defects.after_ready(topology, cluster)
        if topology.hollow_nodes.count:
            figures = hollow.realise(cluster.api, topology, lambda line: say(f"run {state.run_id}: {line}"))
            (run_dir / "hollow.json").write_text(json.dumps(asdict(figures)))
    except BaseException as error:
        explanation = _explain_failure(run_dir, specs) if isinstance(error, ClusterError) else ""
        say(f"run {state.run_id}: start-up failed, tearing down")
        down(run_dir, keep_logs=True)
        if isinstance(error, ClusterError) and explanation:
            raise ClusterError(f"{error.problem}\n{explanation}", error.fix) from None
        raise
    state.status = "ready"
    state.save()
    say(f"run {state.run_id}: ready in {time.monotonic() - started:.1f}s")
    return cluster


def _require_binaries(layout, names: list[str]) -> None:
    """Every binary the topology runs, or one ToolchainError naming all that are missing and the command."""
    missing = []
    for name in names:
        try:
            layout.binary(name)
        except ToolchainError as error:
            missing.append(error)
    if missing:
        fix = max((e.fix for e in missing), key=len)  # the one with --kubernetes, if a Kubernetes binary is missing
        raise ToolchainError("; ".join(e.problem for e in missing), fix)


def _write_pki(topology: Topology, layout) -> None:
    pki = layout.pki
    pki.generate(topology)
    write_kubeconfig(layout.admin_kubeconfig, server=topology.api_endpoint, ca=pki.ca.cert, client=pki.client("admin"),
                     user="admin", cluster=topology.name)
    for host in topology.controllers:
        local = f"https://{topology.address_of(host)}:{topology.apiserver.port}"
        for who in ("controller-manager", "scheduler"):
            write_kubeconfig(layout.kubeconfig(host.name, who), server=local, ca=pki.ca.cert, client=pki.client(who),
                             user=f"system:kube-{who}", cluster=topology.name)
    for host in topology.node_hosts if topology.hollow_nodes.count else []:
        # through the load balancer, like a kubelet: losing one apiserver must not make nodes NotReady
        write_kubeconfig(layout.kubeconfig(host.name, "kwok"), server=topology.api_endpoint, ca=pki.ca.cert,
                         client=pki.client("kwok"), user="quorum-kwok", cluster=topology.name)


def _start_keeper(run_dir: Path, state: RunState, spec: ComponentSpec, in_container: bool = False) -> None:
    """Write the component's files and its keeper's spec; start the keeper here unless its host is a
    container (whose command starts the keepers of its components, in the container's namespaces)."""
    for path, content in spec.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    (run_dir / "logs").mkdir(exist_ok=True)
    control = run_dir / "components" / spec.id
    KeeperSpec(
        component_id=spec.id, argv=spec.argv, netns="" if in_container else netns.netns_name(state.run_id, spec.host),
        hostname="" if in_container else spec.host,
        policy=spec.restart.policy, backoff_s=spec.restart.backoff_s, max_backoff_s=spec.restart.max_backoff_s,
        log=str(run_dir / "logs" / f"{spec.id}.log"), events=str(run_dir / "events.jsonl"), env=spec.env,
    ).save(control)
    if in_container:
        return
    with open(run_dir / "logs" / "supervisor.log", "ab") as log:
        subprocess.Popen([sys.executable, "-m", "harness.backends.process.supervisor", str(control)], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=environment_for_keepers())


def _wait_ready(cluster: Cluster, say: Say, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    topology = cluster.topology
    want_leases = topology.leader_election.enabled
    pending: list[str] = []
    while time.monotonic() < deadline:
        events = cluster.events()
        dead = [cid for cid, spec in cluster.specs.items() if spec.restart.policy == "never"
                and any(e["component"] == cid and e["event"] == "exit" for e in events)]
        if dead:  # nothing will bring it back: fail now rather than at the timeout
            raise ClusterError(f"{', '.join(dead)} exited during start-up and its restart policy is never",
                               "read the log lines below")
        health = cluster.component_health(timeout=0.5)
        pending = [cid for cid, ok in health.items() if not ok]
        if not pending and cluster.api.ready():
            holders = cluster.lease_holders() if want_leases else {}
            unheld = [name for name, host in holders.items() if host is None]
            # every apiserver in rotation: /readyz through the LB answers as soon as one is, and a scenario that
            # starts while the LB still counts another's rise checks misjudges it (seen in CI: c1 rising for 30 s)
            pending = [f"lease {name}" for name in unheld] + cluster.lb_problems()
            if not pending:
                return
        time.sleep(0.2)
    raise ClusterError(
        f"cluster {topology.name} not ready after {timeout_s:.0f}s; still waiting for: {', '.join(pending) or '/readyz via LB'}",
        "read the component log lines below; `quorum logs COMPONENT@HOST` after a failed start shows whole logs",
    )


def _explain_failure(run_dir: Path, specs: list[ComponentSpec], lines: int = 6) -> str:
    """The last lines of each component's log that look like errors."""
    parts = []
    for spec in specs:
        log = run_dir / "logs" / f"{spec.id}.log"
        if not log.exists():
            continue
        bad = error_lines(log.read_text(errors="replace"), lines)
        if bad:
            parts.append(f"  {spec.id}:\n" + "\n".join(f"    {line[:300]}" for line in bad))
    return "component logs:\n" + "\n".join(parts) if parts else ""


ERROR_WORDS = ("error", "fatal", "failed", "unknown flag", "panic", "[alert]")


def error_lines(log: str, limit: int) -> list[str]:
    """The last `limit` distinct lines of a log that look like errors. A component restarted by its keeper
    repeats the same lines with other pids and times; counting each once keeps the cause (often the first
    line of each attempt) from being pushed out by the summary lines after it."""
    latest: dict[str, str] = {}
    for line in log.splitlines():
        if any(word in line.lower() for word in ERROR_WORDS):
            key = re.sub(r"\d+", "#", line)
            latest.pop(key, None)  # re-insert: dict order becomes order of last occurrence
            latest[key] = line
    return list(latest.values())[-limit:]


# ---- teardown -----------------------------------------------------------------------------------


def _pids_in(netns_names: list[str]) -> set[int]:
    pids: set[int] = set()
    present = set(netns.list_netns())
    for name in netns_names:
        if name in present:
            pids |= {int(p) for p in run(["ip", "netns", "pids", name], check=False).split()}
    return pids


def _keeper_pids(run_dir: Path | None = None) -> set[int]:
    """Supervisor processes (of one run directory, or of any run)."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 4 and argv[1:3] == [b"-m", b"harness.backends.process.supervisor"]:
            if run_dir is None or argv[3].decode(errors="replace").startswith(str(run_dir)):
                found.add(int(proc.name))
    return found


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def _wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = {pid for pid in pids if Path(f"/proc/{pid}").exists() and not _is_zombie(pid)}
        if not pids:
            return set()
        time.sleep(0.05)
    return pids


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def stop_processes(keepers: set[int], netns_names: list[str]) -> None:
    """Stop keepers (they stop their components), then kill whatever still lives in the namespaces."""
    members = _pids_in(netns_names)
    _signal_all(members, signal.SIGCONT)  # paused processes must be able to die
    _signal_all(keepers, signal.SIGTERM)
    _signal_all(members, signal.SIGTERM)
    left = _wait_gone(keepers | members, STOP_TIMEOUT_S / 3)
    _signal_all(left | _pids_in(netns_names), signal.SIGKILL)
    left = _wait_gone(left | _pids_in(netns_names), STOP_TIMEOUT_S)
    if left:
        raise ClusterError(f"processes {sorted(left)} did not exit after SIGKILL", "check them with ps; then quorum down --all")


def down(run_dir: Path, keep_logs: bool = True) -> list[str]:
    """Remove processes, namespaces, bridge, firewall rules and state of one run. Idempotent."""
    require_root("down")
    run_dir = Path(run_dir).resolve()
    if not (run_dir / "state.json").exists():
        return []
    state = RunState.load(run_dir)
    state.status = "stopping"
    state.save()
    removed = []
    if state.backend == "kind":  # kind's node containers go first: the network cannot go while they use it
        from harness.backends.kind.cluster import cluster_name, remove_nodes

        removed += remove_nodes(cluster_name(state.run_id))
    if state.backend in ("docker", "kind"):
        removed += docker.teardown(state)  # the containers take their processes
    stop_processes(_keeper_pids(run_dir), state.netns)
    removed += netns.teardown(state.run_id, netns=state.netns, veths=state.veths,
                              bridge=None if state.backend in ("docker", "kind") else state.bridge, rules=state.iptables)
    unregister(state.run_id)
    # everything that holds keys or cluster data goes; logs, events and the fault journal stay for debugging
    for name in ("pki", "data", "snapshots", "config", "components", "admin.kubeconfig", "kubeconfig", "topology.yaml",
                 "state.json"):
        path = run_dir / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    if not keep_logs:
        shutil.rmtree(run_dir, ignore_errors=True)
    return removed


def down_all() -> list[str]:
    """Remove every run registered here, then anything left by a crashed run that never registered."""
    require_root("down")
    removed = []
    for run_id, run_dir in registered_runs().items():
        if (run_dir / "state.json").exists():
            removed += down(run_dir)
        unregister(run_id)
    if docker.engine_answers():  # kind's node containers of crashed runs, before their networks
        from harness.backends.kind.cluster import remove_nodes

        removed += remove_nodes()
    removed += docker.leftovers()
    leftover_ns = [n for n in netns.list_netns() if n.startswith(netns.PREFIX_NETNS)]
    stop_processes(_keeper_pids(), leftover_ns)
    links = run(["ip", "-o", "link", "show"], check=False).splitlines()
    names = [line.split(": ")[1].split("@")[0] for line in links if ": " in line]
    removed += netns.teardown(
        "*", netns=leftover_ns, veths=[n for n in names if n.startswith(netns.PREFIX_VETH)],
        bridge=None, rules=netns.leftover_rules(),
    )
    for bridge in [n for n in names if n.startswith(netns.PREFIX_BRIDGE)]:
        run(["ip", "link", "del", bridge], check=False)
        removed.append(f"bridge {bridge}")
    netns.remove_guard_route_if_unused()
    return removed


def find_run(name_or_dir: str | None) -> Path:
    """A run directory from a path, a cluster name, or (if omitted) the only live run."""
    runs = {rid: d for rid, d in registered_runs().items() if (d / "state.json").exists()}
    if name_or_dir and Path(name_or_dir).is_dir() and (Path(name_or_dir) / "state.json").exists():
        return Path(name_or_dir).resolve()
    if name_or_dir:
        matches = [d for rid, d in runs.items() if rid == name_or_dir or RunState.load(d).name == name_or_dir]
        if len(matches) == 1:
            return matches[0]
        raise ClusterError(f"no running cluster named {name_or_dir!r}",
                           f"running: {', '.join(RunState.load(d).name for d in runs.values()) or 'none'}")
    if len(runs) == 1:
        return next(iter(runs.values()))
    if not runs:
        raise ClusterError("no cluster is running", "quorum up clusters/ha3.yaml")
    raise ClusterError("several clusters are running", "name one: " + ", ".join(RunState.load(d).name for d in runs.values()))


