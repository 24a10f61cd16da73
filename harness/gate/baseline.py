"""Don't get worse beyond the noise: each figure of a run against the same figure of the runs the gate promoted
before (harness/gate/store.py).

The noise of a figure is its own spread over the promoted runs: with three or more earlier values, a figure regresses
when it is worse than their mean by more than three standard deviations (and a floor: 0.5 s, 0.1 percentage point,
one count). With fewer, the policy's `baseline_tolerance_pct` of the last value stands in, with the same floor."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from harness.objectives.catalog import MEASURES

FLOORS = {"s": 0.5, "%": 0.1, "days": 1.0, "count": 1.0}
SPREAD_RUNS = 3  # earlier values needed before their own spread sets the tolerance
SIGMAS = 3.0


@dataclass(frozen=True)
class Regression:
    label: str
    now: float
    then: float  # the mean (or the one value) it is compared with
    allowed: float  # how much worse it could be, in the figure's unit
    how: str  # where the allowance comes from

    def text(self) -> str:
        return (f"{self.label} regressed: {self.now:g} against {self.then:g} before, more than the {self.allowed:g} "
                f"{MEASURES[self.label.split('[')[0]].unit} the noise allows ({self.how})")


def regression(name: str, label: str, now: float, earlier: list[float], tolerance_pct: float) -> Regression | None:
    """Whether `now` is worse than the earlier values (oldest first) by more than their noise."""
    if not earlier:
        return None
    spec = MEASURES[name]
    floor = FLOORS.get(spec.unit, 1.0)
    if len(earlier) >= SPREAD_RUNS:
        then = statistics.fmean(earlier)
        allowed = max(floor, SIGMAS * statistics.stdev(earlier))
        how = f"{SIGMAS:g} x the spread of {len(earlier)} promoted runs, at least {floor:g}"
    else:
        then = earlier[-1]
        allowed = max(floor, abs(then) * tolerance_pct / 100)
        how = f"baseline_tolerance_pct {tolerance_pct:g} % of the last promoted run, at least {floor:g}"
    worse_by = (then - now) if spec.higher_is_better else (now - then)
    return Regression(label, now, round(then, 4), round(allowed, 4), how) if worse_by > allowed else None
