"""What a target offers to grow its control plane onto spare hosts and shrink it back (Capability.SCALE). The order
of the steps, etcd's membership and the checks between steps are the scale faults' (harness/faults/scale.py);
a target only says how a host's components come to exist or stop existing, and how its load balancer's rotation
changes without a restart."""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.topology import Component


class Scalable(ABC):
    @abstractmethod
    def spare_hosts(self) -> list[str]:
        """Hosts provisioned for the control plane that run no component (a topology's Role.SPARE)."""

    @abstractmethod
    def join_host(self, host: str) -> None:
        """Make a spare host a controller: its components configured and held (none started), its etcd member
        configured to join a running cluster. The cluster's other command lines are left as they run. A leaving
        controller (drain_host) stays instead, its etcd member configured to join anew."""

    @abstractmethod
    def drain_host(self, host: str) -> None:
        """Mark a controller as leaving: from now on no apiserver is configured to use its etcd member (each picks
        that up when reconfigured), and its load balancer entry is configured disabled. Nothing is restarted."""

    @abstractmethod
    def retire_host(self, host: str) -> None:
        """Make a leaving controller a spare again once each of its components is held: their configuration and
        etcd's data directory removed, the host left provisioned. Refused while one of them runs."""

    @abstractmethod
    def reconfigure(self, component: Component | str, host: str) -> bool:
        """Give the component the command line the cluster's current shape configures (e.g. the apiservers' etcd
        members after a join); restarted only if its running line differs. True if it was restarted."""

    @abstractmethod
    def lb_rotation(self, host: str, serving: bool) -> None:
        """Put the host's apiserver in the load balancer's rotation (its health checks decide when it is UP) or
        take it out (no new connection goes there), without restarting the load balancer."""
