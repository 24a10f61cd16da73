"""A measured figure against its objective: a verdict that says whether the cluster meets what the user needs."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict
from harness.objectives.catalog import spec
from harness.objectives.measurement import Measurement
from harness.objectives.policy import Objectives

CHECKER = "objective"


def _text(value: float, unit: str) -> str:
    if unit == "x":  # a multiple, as capacity_headroom_x
        return f"{value:g}x"
    if unit in ("%", "days"):
        return f"{value:g} {unit}"
    return f"{value:g}" if unit == "count" else f"{value:.2f} s"


def meets(measurement: Measurement, objectives: Objectives) -> Verdict:
    measure = spec(measurement.name)
    objective = objectives.for_measure(measurement.name, measurement.subject)
    figures = {"measure": measurement.label, "value": measurement.value, "objective": objective,
               "bound": measurement.bound}
    if objective is None:
        return Verdict(CHECKER, Status.UNKNOWN, f"{measurement.label}: the policy has no objective for it", figures)
    wanted = f"{'at least' if measure.higher_is_better else 'at most'} {_text(objective, measure.unit)}"
    if measurement.value is None:
        return Verdict(CHECKER, Status.FAIL, f"{measurement.label}: {measure.what} was not observed; the objective "
                       f"is {wanted}", figures)
    ok = measurement.value >= objective if measure.higher_is_better else measurement.value <= objective
    configured = f"; its configuration promises {_text(measurement.bound, measure.unit)}" \
        if measurement.bound is not None else ""
    text = f"{measurement.label}: {_text(measurement.value, measure.unit)}, the objective is {wanted}{configured}"
    return Verdict(CHECKER, Status.PASS if ok else Status.FAIL, text + ("" if ok else ": misses the objective"),
                   figures)
