"""Where a rising load stops being carried: the first step at which the cluster shows a limit (an SLO broken
inside the apiservers, priority and fairness turning requests away, errors over the budget, the nodes' Lease
renewals falling behind, or the offered rate not answered while the generator had room), and what the cluster
carried in the step before it. A step at which the generator itself ran out of room ends the search without a knee:
what was found then is the generator's limit, not the cluster's, and only a lower bound on its capacity."""

from __future__ import annotations

from dataclasses import dataclass

from harness.capacity.steps import CapacityStep
from harness.thresholds import GENERATOR_MACHINE_BUSY_PCT


@dataclass(frozen=True)
class KneeLimits:
    """slo_s: each SLO class's p99 objective inside the apiservers (api_p99_s); failed_pct: the share of failed
    requests a step may have (100 - the availability objective); shortfall_pct: how far below the offered rate the
    answered rate may fall; generator_busy_pct: the share of its one core at which the generator's busiest process
    is the limit; machine_busy_pct: the share of the machine's cores busy at which the generator may wait for one."""

    slo_s: dict[str, float]
    failed_pct: float
    shortfall_pct: float
    generator_busy_pct: float
    machine_busy_pct: float = GENERATOR_MACHINE_BUSY_PCT


@dataclass(frozen=True)
class Knee:
    """carried: the last step before the limit (None: not even the first step was carried); stopped_by: what ended
    the search (None: the steps ran out first); cluster_limit: it was the cluster's; at_step: the index of that
    step; busiest: the part of the control plane closest to saturation there."""

    carried: CapacityStep | None
    stopped_by: str | None
    cluster_limit: bool
    at_step: int | None
    busiest: tuple[str, float] | None

    @property
    def carried_rps(self) -> dict[str, float] | None:
        """By SLO class, the load the carried step put on the cluster (CapacityStep.carried_rps)."""
        return None if self.carried is None else self.carried.carried_rps()

    @property
    def carried_user_rps(self) -> float:
        """The users' requests per second the carried step offered, all classes together (0: none carried)."""
        return 0.0 if self.carried is None else sum(self.carried.offered_rps.values())


def cluster_limits(step: CapacityStep, limits: KneeLimits) -> list[str]:
    """What the cluster showed in this step that a carried load never does."""
    found = [f"{klass} p99 {p99:.3f} s over its {limits.slo_s[klass]:g} s inside the apiservers"
             for klass, p99 in sorted(step.p99_s.items()) if klass in limits.slo_s and p99 > limits.slo_s[klass]]
    if step.rejected > 0:
        found.append(f"priority and fairness rejected {step.rejected} requests")
    if step.failed_pct > limits.failed_pct:
        found.append(f"{step.failed_pct:.2f} % of {step.requests} requests failed (budget {limits.failed_pct:g} %)")
    # the nodes' heartbeats are load the cluster must carry too: renewals falling behind their period is the first
    # step of nodes turning NotReady under an overload
    renewing = step.background_rps.get("mutating", 0.0)
    if step.lease_renewals_rps is not None and renewing > 0 and \
            step.lease_renewals_rps < renewing * (1 - limits.shortfall_pct / 100):
        found.append(f"the nodes' Lease renewals fell to {step.lease_renewals_rps:.1f}/s of {renewing:g}/s")
    return found


def short_of_offered(step: CapacityStep, limits: KneeLimits) -> bool:
    offered, answered = sum(step.offered_rps.values()), sum(step.achieved_rps.values())
    return answered < offered * (1 - limits.shortfall_pct / 100)


def find_knee(steps: list[CapacityStep], limits: KneeLimits) -> Knee:
    """The first step that found a limit, and what the step before it carried."""
    carried: CapacityStep | None = None
    for index, step in enumerate(steps):
        found = cluster_limits(step, limits)
        busy, machine = step.generator_busy_pct, step.machine_busy_pct
        generator_full = busy is None or busy >= limits.generator_busy_pct
        machine_full = machine is not None and machine >= limits.machine_busy_pct
        answered = f"answered {sum(step.achieved_rps.values()):.1f} of {sum(step.offered_rps.values()):.1f} " \
                   f"requests per second offered"
        if not found and short_of_offered(step, limits) and not generator_full and not machine_full:
            on_machine = "" if machine is None else f", the machine at {machine:.0f} %"
            found = [f"{answered}, the generator's busiest process at {busy:.0f} % of its core{on_machine}"]
        if found:
            return Knee(carried, "; ".join(found), True, index, step.busiest())
        if machine_full and short_of_offered(step, limits):
            return Knee(carried, f"{answered} with the generator's machine {machine:.0f} % busy (its limit "
                        f"{limits.machine_busy_pct:g} %): its processes waited for a core, so the limit may be the "
                        f"generator's", False, index, step.busiest())
        if busy is None and short_of_offered(step, limits):
            return Knee(carried, "the offered rate was not answered and the generator's CPU was "
                        "not measured, so the limit may be the generator's", False, index, step.busiest())
        if busy is not None and busy >= limits.generator_busy_pct:
            return Knee(carried, f"the generator's busiest process reached {busy:.0f} % of its core (its limit "
                        f"{limits.generator_busy_pct:g} %) before the cluster showed a limit", False, index,
                        step.busiest())
        carried = step
    return Knee(carried, None, False, None, None)
