"""Faults of a pod's container as the node's runtime runs it, with or without the API: a static pod, a checkpoint,
a DaemonSet's pod. The target finds and signals the container (its containerd on kind); the kubelet restarts it, so
heal has nothing to undo."""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.errors import FaultError
from harness.faults.base import Fault, wait_for
from harness.target.capabilities import Capability
from harness.target.pods import KUBERNETES_NAME
from harness.target.protocol import HostRole, Target


@dataclass
class ContainerKill(Fault):
    """On each host (every control-plane host by default), wait until the runtime runs a container named
    `container` in `namespace` (and, if `after` names another container of that namespace, that one too), then
    SIGKILL it. Waiting makes the kill land at a moment a scenario can name, e.g. "the checkpointer, right after it
    started the apiserver's checkpoint, before that apiserver answers". captured["killed"]: host -> container ids."""

    name = "container-kill"
    requires = (Capability.PODS,)
    container: str = ""
    namespace: str = "kube-system"
    after: str | None = None
    hosts: list[str] | None = None
    wait_s: float = 60.0

    def plan(self, target: Target) -> None:
        for what, value in (("container", self.container), ("namespace", self.namespace),
                            ("after", self.after if self.after is not None else "x")):
            if not KUBERNETES_NAME.match(value):
                raise FaultError(f"container-kill's {what} {value!r} is not a Kubernetes name",
                                 "give a container's or namespace's name (lower-case letters, digits and '-'), e.g. "
                                 "checkpointer")
        if not 0 < self.wait_s <= 600:
            raise FaultError(f"container-kill's wait_s {self.wait_s} is out of range", "give 0 < wait_s <= 600")
        chosen = self.hosts or target.hosts(HostRole.CONTROLLER)
        unknown = sorted(set(chosen) - set(target.hosts()))
        if unknown:
            raise KeyError(f"no hosts {unknown}; hosts: {', '.join(target.hosts())}")
        self.captured["hosts"] = chosen

    def _ready(self, target: Target, host: str) -> list[str]:
        """The containers to kill on `host` if the moment has come, else []."""
        found = target.pod_containers(host, self.namespace, self.container)
        if found and self.after and not target.pod_containers(host, self.namespace, self.after):
            return []
        return found

    def act(self, target: Target) -> None:
        # every host in turn, round after round: each is killed as soon as its own moment comes (the hosts boot
        # together, and a kill that waited for another host's could come after the API is back)
        pending, killed = list(self.captured["hosts"]), {}
        deadline = time.monotonic() + self.wait_s
        while pending:
            for host in list(pending):
                found = self._ready(target, host)
                for container_id in found:
                    target.kill_pod_container(host, container_id)
                if found:
                    killed[host] = found
                    pending.remove(host)
            if pending and time.monotonic() > deadline:
                self.captured["killed"] = killed
                beside = f" beside {self.after}" if self.after else ""
                raise FaultError(f"{self.namespace}/{self.container} was not running on {', '.join(pending)}{beside} "
                                 f"within {self.wait_s:.0f}s, so it was not killed there",
                                 "check the pods with `kubectl get pods -A -o wide`")
            if pending:
                time.sleep(0.2)
        for host, found in killed.items():
            wait_for(lambda: not set(found) & set(target.pod_containers(host, self.namespace, self.container)),
                     10.0, interval_s=0.2, what=f"{self.namespace}/{self.container} on {host} to die")
        self.captured["killed"] = killed

    def undo(self, target: Target) -> None:
        pass  # a killed container is the kubelet's to restart, as its pod's restart policy says
