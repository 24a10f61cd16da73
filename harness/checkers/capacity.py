"""Capacity headroom: what the control plane carried at its knee (harness/capacity/knee.py), divided by the load it
must carry in production (the policy's expected load), by SLO class; the smallest ratio is the headroom. A knee
that was the generator's, or steps that ended before any limit, bound the capacity from below only: enough to pass
when that bound already meets the objective, never enough to fail."""

from __future__ import annotations

from harness.capacity.knee import KneeLimits, find_knee
from harness.capacity.steps import steps_of
from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History


@checker("capacity-headroom")
def capacity_headroom(history: History, *, expected_rps: dict[str, float], objective_x: float, slo_s: dict[str, float],
                      failed_pct: float, shortfall_pct: float, generator_busy_pct: float,
                      apiservers_up: int | None = None) -> Verdict:
    """The steps recorded with `apiservers_up` serving (None: all steps) against `expected_rps` (by SLO class):
    pass when the headroom meets `objective_x`, fail when the cluster's own knee is below it, unknown when what was
    found is only a lower bound under it. The limits a step is judged by are KneeLimits' fields (plain values, so a
    saved History is judged again with them)."""
    limits = KneeLimits(slo_s, failed_pct, shortfall_pct, generator_busy_pct)
    where = "" if apiservers_up is None else f" with {apiservers_up} apiservers serving"
    steps = steps_of(history, apiservers_up=apiservers_up)
    if not steps:
        return Verdict("capacity-headroom", Status.UNKNOWN, f"no step of the rising load was recorded{where}", {})
    wanted = {klass: rate for klass, rate in expected_rps.items() if rate > 0}
    if not wanted:
        return Verdict("capacity-headroom", Status.UNKNOWN, "the expected load names no requests to carry", {})
    knee = find_knee(steps, limits)
    carried = knee.carried_rps or {}
    ratios = {klass: carried.get(klass, 0.0) / rate for klass, rate in wanted.items()}
    limiting = min(ratios, key=ratios.get)
    headroom = round(ratios[limiting], 3)
    figures = {"headroom_x": headroom, "limiting_class": limiting, "carried_rps": carried, "expected_rps": wanted,
               "stopped_by": knee.stopped_by, "steps": len(steps), "knee_step": knee.at_step,
               "busiest": None if knee.busiest is None else {"part": knee.busiest[0], "share": knee.busiest[1]},
               "apiservers_up": apiservers_up}
    carried_text = f"carried {carried.get(limiting, 0.0):.1f} {limiting} requests/s against {wanted[limiting]:g} " \
                   f"expected{where}: headroom {headroom:g}x (objective {objective_x:g}x)"
    if knee.cluster_limit:
        ended = f"the cluster's knee at step {knee.at_step + 1} of {len(steps)}: {knee.stopped_by}"
        if knee.busiest is not None:
            ended += f" (busiest: {knee.busiest[0]} at {knee.busiest[1]:.0%})"
        status = Status.PASS if headroom >= objective_x else Status.FAIL
        return Verdict("capacity-headroom", status, f"{carried_text}; {ended}", figures)
    bound = knee.stopped_by or f"the {len(steps)} steps ended before the cluster showed a limit"
    if headroom >= objective_x:
        return Verdict("capacity-headroom", Status.PASS, f"at least: {carried_text}; {bound}", figures)
    return Verdict("capacity-headroom", Status.UNKNOWN, f"only a lower bound: {carried_text}; {bound}", figures)
