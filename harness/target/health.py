"""Whether the cluster is well, as one part of a Target: what is unhealthy right now, each component's own health
check, who holds the leader leases, and (where the load balancer's admin interface is Quorum's to read) the load
balancer's view of each apiserver. Scenarios, the heal and the fixtures ask it through `target.health`; a backend
writes how its cluster is looked at, never how long to wait for it (`problems_after` is the one wait)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from harness.errors import Unsupported
from harness.target.capabilities import Capability
from harness.topology import Component
from harness.wait import until

LEASES = ("kube-controller-manager", "kube-scheduler")  # the leader-elected components


class Health(ABC):
    LB_VIEW: ClassVar[bool] = False  # whether `lb_server_states` is offered (Capability.LB_ADMIN)

    def __init__(self, target: Any) -> None:
        """Built by its target on first use (Target.health), with the target to look through."""
        self.target = target

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        """What a target with this part can tell about its cluster's health beyond what every target tells."""
        return frozenset({Capability.LB_ADMIN}) if cls.LB_VIEW else frozenset()

    @abstractmethod
    def problems(self) -> list[str]:
        """What is unhealthy right now (empty when the whole cluster is healthy)."""

    def problems_after(self, timeout_s: float, *, clean_looks: int = 1) -> list[str]:
        """Wait up to `timeout_s` for the cluster to heal itself; what is still unhealthy (empty if healthy), as the
        last look saw it. `clean_looks` > 1: healthy only once that many looks in a row, the target's
        poll_interval_s apart, found nothing, so a component that exits just after a clean look (a late effect of
        an earlier fault) is waited for."""
        last: list[str] = []
        clean = 0

        def clean_long_enough() -> bool:
            nonlocal last, clean
            last = self.problems()
            clean = 0 if last else clean + 1
            return clean >= clean_looks

        until(clean_long_enough, timeout_s, self.target.poll_interval_s)
        return last

    @abstractmethod
    def component_healthy(self, component: Component | str, host: str) -> bool:
        """The component's own health check on `host` answers healthy (its /readyz, /healthz or etcd's status)."""

    def lease_holders(self) -> dict[str, str | None]:
        """Lease name -> host holding it (None if unheld or unreadable)."""
        holders = {}
        for name in LEASES:
            holder = self.target.api.lease_holder(name)
            holders[name] = self.lease_host(holder.identity) if holder else None
        return holders

    def lease_host(self, identity: str) -> str:
        """The host of a lease holder's identity: identities are '<hostname>_<uuid>', and most targets name their
        hosts by their hostnames."""
        return identity.split("_", 1)[0]

    def lb_server_states(self) -> dict[str, str]:
        """Apiserver host -> the load balancer's state for it (UP, DOWN, "UP 1/3", ...), as the load balancer's own
        admin interface says (LB_VIEW); a part without that view is refused with the capability's name."""
        self.target.require(Capability.LB_ADMIN)
        raise Unsupported(f"{type(self).__name__} cannot read the load balancer's view",
                          "judge the load balancer from outside (harness/monitors/lb_routes.py)")
