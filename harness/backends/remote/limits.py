"""An inventory's `limits`, enforced before a fault acts on someone else's cluster: only inside the maintenance window,
never more faults at once than allowed, and only on the allowed hosts. A fault's hosts are those its parameters and
what it resolved when planned name (a component as '<component>@<host>', a host, a partition's sides, a lease
holder): every fault names every host it acts on, so a fault that names none is refused while hosts are limited."""

from __future__ import annotations

from datetime import datetime, time, timezone
from typing import TYPE_CHECKING, Any

from harness.errors import FaultRefused
from harness.inventory.model import Limits

if TYPE_CHECKING:
    from harness.faults.base import Fault


def within(now: time, start: time, end: time) -> bool:
    """`now` inside [start, end), a window that may run past midnight (22:00-04:00)."""
    return start <= now < end if start <= end else now >= start or now < end


def hosts_named(value: Any, hosts: set[str]) -> set[str]:
    """The hosts of `hosts` that a fault's parameters or captured values name, at any depth."""
    if isinstance(value, str):
        name = value.rpartition("@")[2]
        return {name} if name in hosts else set()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set)):
        return set().union(*(hosts_named(item, hosts) for item in value)) if value else set()
    return set()


def admit(limits: Limits, fault: "Fault", active: list["Fault"], hosts: set[str], now: datetime | None = None) -> None:
    now = now or datetime.now(timezone.utc)
    window = limits.window()
    if window and not within(now.time(), *window):
        raise FaultRefused(f"{fault.describe()} refused: {now:%H:%M} UTC is outside the inventory's maintenance window "
                         f"{limits.window_utc} UTC", "run the destructive suites inside limits.window_utc, or widen it")
    if len(active) >= limits.max_faults_at_once:
        raise FaultRefused(f"{fault.describe()} refused: {len(active)} fault(s) already active and the inventory allows "
                         f"{limits.max_faults_at_once} at once (limits.max_faults_at_once)",
                         "raise limits.max_faults_at_once if the cluster's owner allows more")
    if limits.allowed_hosts is not None:
        named = hosts_named([fault.params(), fault.captured], hosts)
        outside = sorted(named - set(limits.allowed_hosts))
        if not named or outside:
            acts_on = f"it acts on {outside}" if outside else "it names no host it acts on"
            raise FaultRefused(f"{fault.describe()} refused: {acts_on}, and the inventory allows faults only on "
                             f"{limits.allowed_hosts} (limits.allowed_hosts)",
                             "choose a fault on an allowed host, or add the host to limits.allowed_hosts")
