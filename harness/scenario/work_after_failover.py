"""A leader killed while its work is asked for (scenarios/leader_election, scenarios/load/test_scheduling.py): the
lease passes to another identity within the failover bound, and the first probe asked for after the kill is done
within the work's bound. The new leader works, not only holds the lease (kubernetes#125530 held one and did
nothing). Which work, and which measure judges it, is the caller's: a work monitor and the measure's name."""

from __future__ import annotations

import time

from harness.checkers import Verdict, failover_time
from harness.checkers.work import RESUMED_FIGURE, work_resumed
from harness.faults import Kill
from harness.faults.base import Nemesis
from harness.history import History
from harness.monitors.leases import LeaderWatcher
from harness.monitors.work_probes import WorkProbes
from harness.objectives.catalog import configured_bound
from harness.objectives.measurement import from_verdict
from harness.scenario.helpers import judge
from harness.target.protocol import Target


def kill_the_leader_while_work_is_asked_for(cluster: Target, nemesis: Nemesis, leases: LeaderWatcher,
                                            monitor: WorkProbes, history: History, *, lease: str, probe_period_s: float) -> list[Verdict]:
    """SIGKILL `lease`'s holder while `monitor` asks for its work; wait for a new holder and for work asked for after
    the kill to be done; judge the failover (`lease_failover_s`) and the work's return (the measure RESUMED_FIGURE
    names for the monitor's probe), each against its objective and its configured bound."""
    measure = RESUMED_FIGURE[monitor.resumed_op]
    failover_bound = configured_bound("lease_failover_s", cluster)
    bound = configured_bound(measure, cluster)
    leader = leases.holder(lease)
    old = leases.identity(lease)
    # the leader doing the work first (the checker counts it); a cluster that does none is judged after the kill
    monitor.wait_for_work_after(0.0, timeout_s=5 * probe_period_s)
    with nemesis.fault(Kill(component=f"{lease}@{leader}")) as kill:
        leases.wait_for_new_holder(lease, old, timeout=failover_bound + 5)
        # the work asked for after the kill is in place: only a new leader can do it
        monitor.wait_for_work_after(history.in_place_at(kill.id) or time.monotonic(), timeout_s=bound + 5)
    monitor.stop()  # a probe still waiting is recorded as such: how long its work waited is evidence too
    failover = failover_time(history, subject=lease, max_s=failover_bound)
    resumed = work_resumed(history, max_s=bound, probe=monitor.resumed_op)
    return judge(history, failover, resumed, figures={"bound_s": bound, "failover_bound_s": failover_bound},
                 measures=[from_verdict("lease_failover_s", failover, "failover_s", bound=failover_bound),
                           from_verdict(measure, resumed, measure, bound=bound)])
