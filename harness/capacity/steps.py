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
    generator's processes' CPU as a share of the machine (None: not measured); saturation: how busy each part was,
    0 to 1 (e.g. "kube-apiserver@c1 cpu", "etcd@c2 cpu", "seats workload-low"); apiservers_up: how many served."""

    offered_rps: dict[str, float]
    achieved_rps: dict[str, float]
    p99_s: dict[str, float]
    rejected: int
    failed: int
    requests: int
    generator_busy_pct: float | None
    apiservers_up: int
    saturation: dict[str, float] = field(default_factory=dict)

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
