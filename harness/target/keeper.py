"""A keeper: what keeps one component running on a target's hosts, and what faults act through to keep it down or
run it with other flags. Part of the Target (harness/target/protocol.py).

A kubelet keeps a static pod (harness/components/static_pod_keeper.py), systemd a unit
(harness/components/systemd_keeper.py); a target picks one per component, as testinfra picks a service type by
probing the host. Each says what it promises after a kill (its restart budget and back-off), so the configuration's
bounds come from the keeper that applies them, never from a table of backends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from harness.target.capabilities import Capability
from harness.topology import Component


class Keeper(ABC):
    """One component's keeper on every host that runs it; hosts are named as the target names them."""

    component: Component
    # what faults can ask of this kind of keeper: a target claims the union over the kinds it picks from (KEEPERS)
    OFFERS: ClassVar[frozenset[Capability]] = frozenset({Capability.HOLD, Capability.OVERRIDE_ARGS})
    # how long an override may take before the keeper acts on it (a kubelet picks a changed manifest up on its own
    # schedule): a wait for the changed component adds it to the component's own start-up allowance
    override_applied_within_s: float = 0.0

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        return cls.OFFERS

    @abstractmethod
    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        """Stop the component with `signal` and keep it down (the keeper does not restart it) until `release`."""

    @abstractmethod
    def release(self, host: str) -> bool:
        """Let the keeper run the component again; whether it was held (idempotent)."""

    @abstractmethod
    def held(self, host: str) -> bool: ...

    @abstractmethod
    def command_line(self, host: str) -> list[str] | None:
        """The command line the keeper is configured to start the component with (argv[0] first), where it can be
        read without the process; None: the live command line is the configured one."""

    @abstractmethod
    def override(self, host: str, argv: list[str]) -> None:
        """Start the component with `argv` from now on (restarted as needed), until `restore`."""

    @abstractmethod
    def restore(self, host: str) -> bool:
        """Back to the configured command line; whether there was an override (idempotent)."""

    @abstractmethod
    def restarts(self, host: str) -> int:
        """How often the keeper has restarted the component on `host` so far."""

    @abstractmethod
    def restart_budget_s(self, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        """How long after the `kill`-th SIGKILL in a row the component answers again, as the keeper promises it
        (its restart back-off plus the component's start-up allowance), the worst over its hosts."""

    def back_off_reset_in_s(self, host: str) -> float:
        """Seconds until a crash on `host` meets the keeper's first restart back-off again (0: it does now). A
        keeper whose back-off does not grow with recent restarts is always there."""
        return 0.0

    @abstractmethod
    def held_return_s(self, host: str) -> float:
        """From `release` until the component answers again, as the keeper promises (asked after the release)."""

    @abstractmethod
    def log_tail(self, host: str, lines: int = 80) -> str:
        """The end of the component's log as its keeper keeps it ("" when there is none yet)."""

    @abstractmethod
    def sweep(self, host: str) -> list[str]:
        """Without a journal: whatever a fault left held or overridden on `host` undone; what was done."""
