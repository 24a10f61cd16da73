"""Quorum's supervisor as a component's keeper (harness/target/keeper.py), on the process and docker backends: faults
steer it through its control directory (harness/backends/process/supervisor.py: hold, kick, argv.override), its
starts and exits are the run's events, and what it promises after a kill is the topology's restart policy."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from harness.backends.process.processes import cmdline
from harness.backends.process.supervisor import STABLE_AFTER_S, Control
from harness.target.capabilities import Capability
from harness.target.keeper import Keeper
from harness.thresholds import restart_budget_s
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.process.target import ProcessTarget


class SupervisedKeeper(Keeper):
    """One component's supervisors, one per host that runs it (`<component>@<host>`)."""

    # every start and exit is the run's event, and the restart policy is the topology's
    OFFERS = Keeper.OFFERS | {Capability.SUPERVISOR}

    def __init__(self, target: "ProcessTarget", component: Component) -> None:
        self.target = target
        self.component = component

    def control(self, host: str) -> Control:
        return self.target.control(self.component_id(host))

    def component_id(self, host: str) -> str:
        return f"{self.component.value}@{host}"

    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        self.control(host).hold()
        self.target.terminate(self.component, host, grace_s=0.0 if signal == "SIGKILL" else None)

    def release(self, host: str) -> bool:
        control = self.control(host)
        was = control.held()
        control.release()
        control.kick()
        return was

    def held(self, host: str) -> bool:
        return self.control(host).held()

    def command_line(self, host: str) -> list[str]:
        return list(self.control(host).spec().argv)

    def override(self, host: str, argv: list[str]) -> None:
        control = self.control(host)
        control.override(argv)
        self.target.terminate(self.component, host)  # the supervisor starts it again, with the override
        if not control.held():  # a held one starts with it when released
            control.kick()

    def restore(self, host: str) -> bool:
        control = self.control(host)
        was = control.overridden()
        control.clear_override()
        pid = control.child_pid()
        if pid is not None and cmdline(pid) != control.spec().argv:
            self.target.terminate(self.component, host)
        if not control.held():
            control.kick()
        return was

    def restarts(self, host: str) -> int:
        cid = self.component_id(host)
        return sum(1 for e in self.target.events() if e["component"] == cid and e["event"] == "restart")

    def restart_budget_s(self, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        """The topology's restart back-off for the `kill`-th restart in a row plus the start-up allowance (the
        supervisor's back-off resets after a stable run, not by the restarts before)."""
        return restart_budget_s(self.target.topology, self.component, kill)

    def back_off_reset_in_s(self, host: str) -> float:
        """The supervisor resets a component's back-off once its last start is STABLE_AFTER_S old."""
        cid = self.component_id(host)
        starts = [e["t"] for e in self.target.events() if e["component"] == cid and e["event"] == "start"]
        return max(0.0, starts[-1] + STABLE_AFTER_S - time.monotonic()) if starts else 0.0

    def held_return_s(self, host: str) -> float:
        """A release kicks the supervisor, which starts the component at once: its first restart's budget."""
        return self.restart_budget_s()

    def log_tail(self, host: str, lines: int = 80) -> str:
        path = self.target.log_path(self.component_id(host))
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def sweep(self, host: str) -> list[str]:
        cid, control = self.component_id(host), self.control(host)
        if control.held() or control.overridden():
            control.release()
            control.clear_override()
            self.target.terminate(self.component, host)  # it may be running the bad command line
            control.kick()
            return [f"restored {cid}"]
        if control.child_pid() is None:
            # only one that is not running: a kick waits for the next exit and restarts it then, whatever its
            # policy, so a kick left for a running one would undo a later test's `never`
            control.kick()
            return [f"started {cid}"]
        return []
