"""One pass of the checkpointer on its node: from what the API and the container runtime say, save each
parent's checkpoint, then start, stop or collect checkpoints as state.py decides. The sources are callables (the
node's clients in the DaemonSet; plain data in tests), so a pass is the same code in both."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.checkpointer import manifest
from harness.checkpointer.files import Disk
from harness.checkpointer.state import Action, Checkpoints, Plan

INTERVAL_S = 3.0  # one pass every 3 s (bootkube's checkpointer polled as often)
GRACE_S = 60.0  # a checkpoint outlives its parent's deletion from the API this long (bootkube's default: 1 min)


@dataclass(frozen=True)
class Seen:
    """What one pass read. `api_pods` is None when the API did not answer."""

    api_pods: list[dict] | None  # the pods the API schedules on this node: the only source of a parent's spec
    local_pods: list[dict]  # the pods the node knows, by their metadata (the runtime's sandboxes, in any state)
    running: set[str]  # namespace/name of the pods the container runtime runs (a checkpoint runs as NAME-NODE)


@dataclass
class Agent:
    disk: Disk
    checkpoints: Checkpoints
    self_name: str | None  # the checkpointer's own parent pod, namespace/name
    fetch: Callable[[str, str, str], dict[str, bytes] | None]  # (kind, namespace, name) -> data, None if unreachable
    collect: bool = True  # False only in a broken twin: nothing is ever removed from the node
    # False only in a broken twin: secrets and config maps are copied only when their parent's spec changed
    refresh: bool = True

    def run_once(self, now: float, seen: Seen) -> Plan:
        api_available = seen.api_pods is not None
        # a parent's spec comes from the API only: the runtime knows a pod's metadata, not its spec; while the API is
        # away the checkpoints saved before are what the node has. A pod being deleted is no parent any more.
        parents = {manifest.full_name(pod): pod for pod in seen.api_pods or []
                   if manifest.is_parent(pod) and not manifest.terminating(pod)}
        local_parents = {manifest.full_name(pod) for pod in seen.local_pods if manifest.is_parent(pod)}
        for name, pod in parents.items():
            checkpoint, secrets, config_maps = manifest.sanitized(pod)
            changed = self.disk.save(name, manifest.serialized(checkpoint))
            # every pass reads them again (a changed secret leaves the pod's spec unchanged); files change only with
            # their data
            if api_available and (changed or self.refresh):
                self._copy(name, secrets, config_maps)
        self.checkpoints.learn(active=self.disk.active(), inactive=self.disk.inactive(), parents=set(parents),
                               self_name=self.self_name)
        plan = self.checkpoints.process(now, api_available=api_available, api_parents=set(parents),
                                        local_running=seen.running, local_parents=local_parents,
                                        superseded=self._superseded(parents) if self.collect else set())
        for name in plan.stops:
            self.disk.stop(name)
        for name in plan.removes if self.collect else ():
            self.disk.remove(name)
        # an active checkpoint follows its parent's newest spec (an upgrade saved since): never a stale copy
        for name, state in self.checkpoints.states.items():
            if state.action is Action.START or name in plan.starts:
                self.disk.start(name)
        return plan

    def _superseded(self, parents: dict[str, dict]) -> set[str]:
        """Checkpoints whose parent is gone while a newer pod of the same controller is Ready here (a DaemonSet's
        update): collected at once, so no later outage or reboot can start the old version (docs/checkpointer.md)."""
        successors = {manifest.owner(pod) for pod in parents.values() if manifest.ready(pod)} - {None}
        return {name for name in self.checkpoints.states
                if name not in parents and self.disk.owner(name) in successors}

    def _copy(self, name: str, secrets: list[str], config_maps: list[str]) -> None:
        namespace = name.partition("/")[0]
        for kind, names, directory in (("secrets", secrets, manifest.secret_dir),
                                       ("configmaps", config_maps, manifest.config_map_dir)):
            for item in names:
                data = self.fetch(kind, namespace, item)
                if data is None:
                    return  # tried again next pass
                self.disk.save_data(directory(name, item), data)
