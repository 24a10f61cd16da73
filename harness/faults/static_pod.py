"""Faults of a kind cluster's control plane, which the kubelet runs as static pods from
/etc/kubernetes/manifests: a static pod's process killed, and a manifest corrupted (and restored).

A manifest is never edited in place (KindCluster.replace_manifest: a hidden file, then a rename).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

import yaml
from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import client
from harness.errors import ClusterError, FaultError
from harness.faults.base import Fault
from harness.backends.kind.handle import COMM_LENGTH, MANIFESTS, STATIC_PODS

HELD_PREFIX = "/etc/kubernetes/.quorum-held-"  # a held manifest, outside MANIFESTS: the kubelet ignores it


def put_back(cluster, node: str, held: str) -> list[str]:
    """Move the held manifests matching `held` (a shell pattern) back into MANIFESTS in `node` by a rename (the
    kubelet never reads half a file); their names.

    The kubelet then starts the pod, not at once: the same manifest returns under the same pod UID (a hash of
    the manifest), so the kubelet's crash-loop back-off for it applies (10 s after the first return, doubling
    up to 5 min, counted from the kill); and before starting a static pod the kubelet creates its mirror pod
    through its node's apiserver, which kubeadm points at the node's own etcd member only, so for etcd it
    waits out a request timeout ("Failed creating a mirror pod ... Timeout" in the kubelet's log). Measured on
    kind: etcd answered 16-42 s after its manifest came back. (Restarting the kubelet as well, as a rebooted
    node would, made it 122 s: the restarted kubelet waits on the same apiserver.)"""
    script = (f'for held in {held}; do [ -f "$held" ] || continue; name="${{held#{HELD_PREFIX}}}"; '
              f'mv -f "$held" "{MANIFESTS}/$name" && echo "$name"; done')
    return cluster.exec(node, ["sh", "-c", script]).split()


def put_back_held_manifests(cluster) -> list[str]:
    """`quorum heal` without a journal entry: every manifest StaticPodStop held goes back to MANIFESTS."""
    healed = []
    for node in cluster.nodes("control-plane"):
        try:
            healed += [f"put back {name} in {node}" for name in put_back(cluster, node, f"{HELD_PREFIX}*.yaml")]
        except ClusterError:
            healed.append(f"could not look for held manifests in {node} (not running?): quorum heal again once it runs")
    return healed


def needs_kind(cluster) -> str | None:
    backend = cluster.state.backend
    if backend != "kind":
        return f"it needs the kind backend (a static-pod control plane); this cluster runs on {backend}"
    return None


@dataclass
class KindNodeFault(Fault):
    node: str = "control-plane"

    def unavailable(self, cluster) -> str | None:
        return needs_kind(cluster)

    def plan(self, cluster) -> None:
        if self.node not in cluster.nodes():
            raise KeyError(f"no kind node {self.node!r}; nodes: {', '.join(cluster.nodes())}")


@dataclass
class StaticPodFault(KindNodeFault):
    component: str = "kube-apiserver"

    def plan(self, cluster) -> None:
        super().plan(cluster)
        if self.component not in STATIC_PODS:
            raise KeyError(f"no static pod {self.component!r}; static pods: {', '.join(STATIC_PODS)}")


@dataclass
class StaticPodKill(StaticPodFault):
    """SIGKILL a static pod's process inside its node; the kubelet must start the container again."""

    name = "static-pod-kill"

    def act(self, cluster) -> None:
        # the node's pid namespace holds every container's processes; -x matches the exact process name, which
        # the kernel keeps to 15 characters (kube-controller-manager is "kube-controller" in /proc/PID/comm)
        cluster.exec(self.node, ["pkill", "-KILL", "-x", self.component[:COMM_LENGTH]])

    def undo(self, cluster) -> None:
        """Nothing to put back: bringing the container back is the kubelet's job, and what the scenario judges."""


@dataclass
class StaticPodPause(StaticPodFault):
    """SIGSTOP a static pod's process inside its node; heal sends SIGCONT. Its sockets stay open and its container
    keeps running, so the kubelet sees nothing until a liveness probe fails (kubeadm's: 8 failures 10 s apart)."""

    name = "static-pod-pause"

    def plan(self, cluster) -> None:
        super().plan(cluster)
        pid = cluster.static_pod_pid(self.node, self.component)
        if pid is None:
            raise FaultError(f"{self.component} is not running in kind node {self.node}, so it cannot be paused",
                             f"quorum status {cluster.run_dir} shows the static pods")
        self.captured["pid"] = pid

    def act(self, cluster) -> None:
        cluster.exec(self.node, ["kill", "-STOP", str(self.captured["pid"])])

    def undo(self, cluster) -> None:
        pid = self.captured.get("pid")
        if pid is not None:  # a process that is gone meanwhile needs nothing
            cluster.exec(self.node, ["kill", "-CONT", str(pid)], check=False)


@dataclass
class StaticPodStop(StaticPodFault):
    """Crash a static pod (SIGKILL) and keep it down until heal, like a member whose machine died: in the same
    command its manifest leaves the kubelet's manifest directory, long before the kubelet's next look at its
    containers (it relists them every second), so the kubelet removes the pod instead of starting it again.
    Heal moves the manifest back (put_back) and the kubelet starts the pod again."""

    name = "static-pod-stop"

    def held(self) -> str:
        return f"{HELD_PREFIX}{self.component}.yaml"

    def act(self, cluster) -> None:
        manifest = f"{MANIFESTS}/{self.component}.yaml"
        script = (f"[ -f {manifest} ] || {{ echo missing; exit 0; }}; "
                  f"pkill -KILL -x {self.component[:COMM_LENGTH]}; mv -f {manifest} {self.held()} && echo held")
        if cluster.exec(self.node, ["sh", "-c", script]).strip() != "held":
            raise FaultError(f"{manifest} is not in kind node {self.node}: its {self.component} is not a static pod "
                             "the kubelet runs", "quorum heal puts back a manifest an earlier run held; or quorum down and up")

    def undo(self, cluster) -> None:
        try:
            put_back(cluster, self.node, self.held())
        except ClusterError as error:
            raise FaultError(f"could not put {self.component}.yaml back in kind node {self.node}: {error}",
                             f"docker exec {cluster.node(self.node)} mv {self.held()} {MANIFESTS}/{self.component}.yaml"
                             ) from None


def corrupted(manifest: str, argument: str) -> str:
    """The manifest with `argument` appended to its first container's command (a mistyped or bad flag)."""
    pod = yaml.safe_load(manifest)
    container = pod["spec"]["containers"][0]
    container["command"] = [*container.get("command", []), argument]
    return yaml.safe_dump(pod, sort_keys=False)


@dataclass
class ManifestCorruption(StaticPodFault):
    """Append a bad argument to a static pod's command in its manifest (the default flag does not exist, so
    the component exits at start and the kubelet keeps restarting it); heal writes the original back."""

    name = "manifest-corruption"
    argument: str = "--quorum-no-such-flag=corrupted"

    def backup(self, cluster) -> Path:
        return cluster.run_dir / "faults" / f"{self.id}-{self.component}.yaml"

    def plan(self, cluster) -> None:
        super().plan(cluster)
        if not self.argument.startswith("-"):
            raise FaultError(f"argument {self.argument!r} is not a flag", "give a flag such as --secure-port=1")

    def act(self, cluster) -> None:
        original = cluster.exec(self.node, ["cat", f"{MANIFESTS}/{self.component}.yaml"])
        if not original.strip():
            raise FaultError(f"{MANIFESTS}/{self.component}.yaml in node {self.node} is empty",
                             "the cluster is not the one kind created; quorum down and up again")
        backup = self.backup(cluster)
        backup.parent.mkdir(parents=True, exist_ok=True)
        backup.write_text(original)  # before the write: heal restores whatever happens next
        cluster.replace_manifest(self.node, f"{self.component}.yaml", corrupted(original, self.argument))

    def undo(self, cluster) -> None:
        backup = self.backup(cluster)
        if not backup.exists():
            return  # act never changed the manifest
        try:
            cluster.replace_manifest(self.node, f"{self.component}.yaml", backup.read_text())
        except DockerException as error:
            raise FaultError(f"could not restore {self.component}.yaml in node {self.node}: {error}",
                             f"quorum heal (the original is kept in {backup})") from None
        backup.unlink()


@dataclass
class KindNodesRestart(Fault):
    """Power loss of several nodes at once: `docker kill` every named node, then start them all again.
    What comes back is what the nodes have on disk: the kubelet, its static-pod manifests, etcd's data.

    Like a machine, a node must come back with its address: etcd keeps its peers' URLs in its data, so a kind
    cluster with several control planes does not survive its nodes trading addresses. Docker gives a started
    container the lowest free address of the network (measured on Docker 20.10), so the nodes are started in
    the order of their old addresses; a node that still gets another address is a harness error, said as such.
    """

    name = "kind-nodes-restart"
    nodes: list[str] | None = None  # default: every control-plane node

    def unavailable(self, cluster) -> str | None:
        return needs_kind(cluster)

    def plan(self, cluster) -> None:
        if self.nodes == []:
            raise FaultError("kind-nodes-restart was given an empty list of nodes",
                             "name the nodes to restart, or leave nodes out for every control-plane node")
        targets = self.nodes or cluster.nodes("control-plane")
        unknown = sorted(set(targets) - set(cluster.nodes()))
        if unknown:
            raise KeyError(f"no kind nodes {unknown}; nodes: {', '.join(cluster.nodes())}")
        self.captured["addresses"] = {node: cluster.address(node) for node in targets}

    def _start_in_address_order(self, cluster) -> None:
        addresses = self.captured["addresses"]
        order = sorted(addresses, key=lambda node: ipaddress.ip_address(addresses[node] or "0.0.0.0"))
        client().container.start([cluster.node(node) for node in order])
        moved = {node: (old, cluster.address(node)) for node, old in addresses.items() if cluster.address(node) != old}
        if moved:
            raise FaultError(f"restarted kind nodes came back with other addresses: {moved} (old, new)",
                             "another container took a node's address while it was down; quorum down and up again")

    def act(self, cluster) -> None:
        client().container.kill([cluster.node(node) for node in self.captured["addresses"]])
        self._start_in_address_order(cluster)

    def undo(self, cluster) -> None:
        docker, stopped = client(), False
        for node in self.captured.get("addresses", {}):
            name = cluster.node(node)
            try:
                state = docker.container.inspect(name).state
                if state.paused:
                    docker.container.unpause(name)
                stopped = stopped or not state.running
            except DockerException as error:
                raise FaultError(f"could not bring kind node {node} back: {error}", f"docker start {name}") from None
        if stopped:
            self._start_in_address_order(cluster)
