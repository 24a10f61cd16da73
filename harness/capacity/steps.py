"""One step of a rising load, as the capacity scenario records it in the History: what was offered, what the
apiservers answered, how long they took inside, what priority and fairness turned away, what failed, and how busy
the generator and each part of the control plane were. The knee is found from these records alone (knee.py), so a
saved run can be judged again."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from harness.history import History

STEP_EVENT = "capacity.step"


@dataclass(frozen=True)
class CapacityStep:
    """offered_rps and achieved_rps: requests per second by SLO class, asked of the generator and answered (with
    any status) over the step's window; p99_s: the highest p99 of each class inside the apiservers over that window
    (a class without calls left out); rejected: the increase of apiserver_flowcontrol_rejected_requests_total over
    the window; failed of requests: the generator's requests that got an error or no answer; generator_busy_pct: the
    busiest of the generator's processes' CPU as a share of its one core (None: not measured); saturation: how
    busy each part was, 0 to 1 (e.g. "seats workload-low"); machine_busy_pct: the share of all the cores of the
    machine the generator runs on that were busy (None: not measured); apiservers_up: how many served;
    background_rps: by SLO class, what the cluster carried beside the generator that the expected load counts too
    (the nodes' Lease renewals: the cluster's nodes' count / their 10 s renewal period); lease_renewals_rps: the
    Lease updates the apiservers served over the step, which shows whether the nodes' renewals went on (None: not
    measured)."""

    offered_rps: dict[str, float]
    achieved_rps: dict[str, float]
    p99_s: dict[str, float]
    rejected: int
    failed: int
    requests: int
    generator_busy_pct: float | None
    apiservers_up: int
    saturation: dict[str, float] = field(default_factory=dict)
    background_rps: dict[str, float] = field(default_factory=dict)
    lease_renewals_rps: float | None = None
    machine_busy_pct: float | None = None

    def carried_rps(self) -> dict[str, float]:
        """By SLO class, the load this step put on the cluster: what the generator offered and the background. The
        knee counts it as carried when the step showed no limit, its answers short of the offer by no more than the
        tolerance: a class's own answered rate, a few dozen requests a step for the rarer ones, is too small a count
        to divide by the expected load."""
        return {klass: round(self.offered_rps.get(klass, 0.0) + self.background_rps.get(klass, 0.0), 3)
                for klass in sorted(set(self.offered_rps) | set(self.background_rps))}

    @property
    def failed_pct(self) -> float:
        return 100.0 * self.failed / self.requests if self.requests else 0.0

    def busiest(self) -> tuple[str, float] | None:
        """The part of the control plane closest to saturation in this step, None if none was measured."""
        return max(self.saturation.items(), key=lambda item: item[1]) if self.saturation else None


def record_step(history: History, step: CapacityStep) -> None:
    history.event(STEP_EVENT, **dataclasses.asdict(step))


def steps_of(history: History, *, apiservers_up: int | None = None) -> list[CapacityStep]:
    """The recorded steps in their order; only those with `apiservers_up` serving when it is given."""
    names = {f.name for f in dataclasses.fields(CapacityStep)}
    steps = [CapacityStep(**{k: v for k, v in event.attrs.items() if k in names})
             for event in history.events_of(STEP_EVENT)]
    return [s for s in steps if apiservers_up is None or s.apiservers_up == apiservers_up]
