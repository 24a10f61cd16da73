"""What runs beside a team's change besides the monitors: the faults it asks for, each at its time (a lease's leader
killed half-way through an upgrade), injected by the Nemesis so that the History records them and every heal runs as
after any fault. A fault whose time comes after the change ended is not injected, and the verdict faults-happened
(harness/checkers/change.py) says so: the change was not judged under it."""

from __future__ import annotations

import threading

from harness.change.procedure import LeaderKill
from harness.checkers.change import FAULT_MISSED
from harness.errors import QuorumError
from harness.faults import Kill, Nemesis
from harness.history import History
from harness.monitors.leases import LeaderWatcher



class FaultsDuringChange:
    """The change's faults on timers from `start()`; `stop()` cancels those not yet due."""

    def __init__(self, nemesis: Nemesis, leases: LeaderWatcher, history: History, faults: list[LeaderKill]) -> None:
        self.nemesis, self.leases, self.history = nemesis, leases, history
        self.timers = [threading.Timer(fault.after_s, self._inject, (fault,)) for fault in faults]

    def start(self) -> "FaultsDuringChange":
        for timer in self.timers:
            timer.daemon = True
            timer.start()
        return self

    def _inject(self, fault: LeaderKill) -> None:
        try:
            host = self.leases.holder(fault.kill_leader)
            self.nemesis.inject(Kill(component=f"{fault.kill_leader}@{host}"))
        except QuorumError as error:  # no holder seen, or its process gone between the look and the kill: said
            self.history.event(FAULT_MISSED, fault=f"kill the {fault.kill_leader} leader", why=str(error)[:300])

    def stop(self) -> None:
        for timer in self.timers:
            timer.cancel()
        for timer in self.timers:
            timer.join(60.0)  # one firing now finishes its kill before the change is judged
