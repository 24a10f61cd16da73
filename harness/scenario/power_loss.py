"""What follows a power loss of every control-plane node of a self-hosted cluster (scenarios/checkpointer): the API
back from the checkpoints, the apiserver handed back to its DaemonSet's pods, the whole cluster healthy; waited for,
recorded in the History and judged against the configuration's bounds, with the power-loss objective's measure."""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.checkers.recovery import recovered_within
from harness.checkers import Verdict
from harness.faults import NodeRestart
from harness.history import History
from harness.objectives.measurement import Measurement, from_verdict
from harness.scenario.helpers import wait_recorded
from harness.target.protocol import Target
from harness.thresholds import checkpoint_api_ready_s, checkpoint_hand_back_s, kind_power_loss_recovery_s

API_READY, HANDED_BACK, HEALTHY = "checkpointer.api-ready", "checkpointer.handed-back", "checkpointer.healthy"


def bound_s() -> float:
    """Power-on to the whole cluster healthy: the API back from its checkpoints, then handed back."""
    return checkpoint_api_ready_s() + checkpoint_hand_back_s()


def _left_s(powered_on: float) -> float:
    return max(0.0, powered_on + bound_s() - time.monotonic())


def recovered(cluster: Target, history: History, *, handed_back: Callable[[], bool], what: str) -> list[Verdict]:
    """Wait for and judge what follows the last node-restart: the API answering through the LB (bound:
    checkpoint_api_ready_s), `handed_back()` true (`what` says what it checks; bound: plus checkpoint_hand_back_s),
    the whole cluster healthy (the same bound). The last verdict is the whole cluster's."""
    api_bound = checkpoint_api_ready_s()
    powered_on = history.fault_windows(NodeRestart.name)[-1][1]
    api_back = wait_recorded(history, API_READY, cluster.api.ready, timeout_s=api_bound + 5.0)
    if api_back is not None:  # with no API there is nothing to hand back to (the verdicts below say so)
        # each wait lasts until its verdict's bound has passed, no longer: later, only the explanation could change
        wait_recorded(history, HANDED_BACK, handed_back, timeout_s=_left_s(powered_on) + 1.0)
        wait_recorded(history, HEALTHY, lambda: not cluster.health.problems(),
                      timeout_s=min(kind_power_loss_recovery_s() + 5.0, _left_s(powered_on) + 1.0))
    return [recovered_within(history, event=API_READY, what="the API answering through the LB", max_s=api_bound,
                             since="end", fault=NodeRestart.name),
            recovered_within(history, event=HANDED_BACK, what=what, max_s=bound_s(), since="end",
                             fault=NodeRestart.name),
            recovered_within(history, event=HEALTHY, what="the whole cluster healthy", max_s=bound_s(), since="end",
                             fault=NodeRestart.name)]


def recovery_measure(healthy: Verdict) -> Measurement:
    """The power-loss objective's measure (what the user needs), beside the configuration's bound."""
    return from_verdict("power_loss_recovery_s", healthy, "recovered_after_s", bound=bound_s(),
                        bound_source="the API back from its checkpoints (a node's boot, etcd's or the checkpointer's "
                                     "start, one pass, the kubelet's manifest pick-up, the apiserver's start-up, one "
                                     "LB check), then handed back to the DaemonSet (the kubelet's rejoin timers, one "
                                     "pass, the manifest pick-up)")
