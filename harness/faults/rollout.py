"""A change of flags rolled out to a self-hosted control-plane DaemonSet, as an upgrade does: the DaemonSet's own
update strategy replaces each node's pod. Heal is what an operator does: `kubectl rollout undo` to the revision
before; when the change took the API away for good, through the bootstrap apiserver (Target.bootstrap_apiserver),
as bootkube's recovery does. docs/checkpointer.md says why two apiservers per node keep the API up."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.clients import rollout
from harness.errors import FaultError
from harness.faults.base import Fault, wait_for
from harness.target.capabilities import Capability
from harness.target.protocol import Target
from harness.wait import until

FLAG = re.compile(r"--[a-z0-9][a-z0-9-]*")
UNDO_TRIES_S = 30.0  # kubectl rollout undo retried this long before the bootstrap apiserver is brought back
# the DaemonSet back on its revision with every pod Ready: a pod's graceful stop (its 30 s terminationGracePeriod)
# and an apiserver's start-up (thresholds.STARTUP_ALLOWANCE_S) with margin
RESTORED_S = 120.0


@dataclass
class Rollout(Fault):
    """Add `add` (flag -> value) to the command of `daemonset`'s pods, rolled out by the DaemonSet's update."""

    name = "rollout"
    requires = (Capability.SELF_HOSTED,)
    daemonset: str = "kube-apiserver"
    add: dict[str, str] = field(default_factory=dict)

    def plan(self, target: Target) -> None:
        if not self.add or any(not FLAG.fullmatch(flag) or "\n" in str(value) for flag, value in self.add.items()):
            raise FaultError(f"rollout of {self.daemonset} was given no flags, or one that is not a flag: {self.add}",
                             "give flags as --name: value (lower-case letters, digits and dashes; one-line values)")
        workload = rollout.daemonset(target.api, self.daemonset)
        if workload is None:
            raise KeyError(f"no DaemonSet kube-system/{self.daemonset} answers through the API")
        self.captured.update(command=rollout.command(workload), revision=rollout.revision(target.api, workload))

    @property
    def command(self) -> list[str]:
        """The command rolled out (after plan)."""
        return self.captured["command"] + [f"{flag}={value}" for flag, value in self.add.items()]

    def act(self, target: Target) -> None:
        rollout.set_command(target.api, self.daemonset, self.command)

    def undo(self, target: Target) -> None:
        """Idempotent: an undo to the captured revision when the DaemonSet runs anything else; then every pod back
        on it and Ready."""
        problem = self._undo(target)
        if problem is not None:
            with target.bootstrap_apiserver():
                problem = self._undo(target, tries_s=RESTORED_S)
                if problem is not None:
                    raise FaultError(f"kubectl rollout undo of {self.daemonset} failed through the bootstrap apiserver "
                                     f"too: {problem}", "kubectl -n kube-system rollout history daemonset/"
                                                        f"{self.daemonset} shows its revisions")
                self._wait_restored(target)
        self._wait_restored(target)

    def _undo(self, target: Target, tries_s: float | None = None) -> str | None:
        """Undo the rollout, tried again every 2 s while the API does not answer or kubectl fails; None once the
        DaemonSet's template is the captured one again, else the last problem seen."""
        problems = ["the API did not answer"]

        def undone() -> bool:
            workload = rollout.daemonset(target.api, self.daemonset)
            if workload is None:
                return False
            if rollout.command(workload) == self.captured["command"]:
                return True  # never changed, or undone already
            problem = rollout.kubectl_rollout_undo(str(target.admin_kubeconfig), self.daemonset,
                                                   self.captured["revision"])
            if problem is not None:
                problems.append(problem)
            return problem is None

        return None if until(undone, UNDO_TRIES_S if tries_s is None else tries_s, 2.0).held else problems[-1]

    def _wait_restored(self, target: Target) -> None:
        def restored() -> bool:
            seen = rollout.pods(target.api, self.daemonset)
            return seen is not None and seen.running(self.captured["command"])

        wait_for(restored, RESTORED_S, 2.0, what=f"every {self.daemonset} pod back on its revision and Ready")
