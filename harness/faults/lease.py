"""Cut off the host that holds a leader lease (kube-controller-manager or kube-scheduler) from every other host:
the leader can neither renew its lease through the API nor be reached, while its process runs on. Written only
against the target protocol (docs/design.md uses it as the worked example of adding a fault)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.faults.network import Partition
from harness.target.capabilities import Capability
from harness.target.health import LEASES
from harness.target.protocol import Target


@dataclass
class IsolateLeaseHolder(Fault):
    """The lease's holder is resolved when the fault is planned (captured["holder"]), so the journal names the
    host a `quorum heal` must reconnect even if the lease moved meanwhile."""

    name = "isolate-lease-holder"
    requires = (Capability.NETWORK,)
    lease: str = "kube-controller-manager"

    def plan(self, target: Target) -> None:
        if self.lease not in LEASES:
            raise FaultError(f"no leader lease {self.lease!r}", f"name one of {', '.join(LEASES)}")
        holder = target.health.lease_holders().get(self.lease)
        if holder is None:
            raise FaultError(f"nobody holds the {self.lease} lease, so there is no holder to isolate",
                             "quorum status shows the lease holders; wait until one is elected")
        self.captured["holder"] = holder
        self.captured["others"] = [host for host in target.hosts() if host != holder]

    def _partition(self) -> Partition:
        return Partition(side_a=[self.captured["holder"]], side_b=self.captured["others"], id=self.id)

    def act(self, target: Target) -> None:
        self._partition().act(target)

    def undo(self, target: Target) -> None:
        if "holder" in self.captured:  # planned: its rules may exist
            self._partition().undo(target)
