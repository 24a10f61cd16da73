"""Capacity headroom: the users' load the control plane carried at its knee (harness/capacity/knee.py) beside the
nodes' own, divided by the users' load it must carry in production (the policy's expected load). The nodes' part
cannot be multiplied (a cluster has the nodes it has), so the headroom is the users' multiple the cluster carried
with the expected nodes renewing their Leases beside it. A run with fewer nodes than expected can fail it (more
nodes only bring the knee sooner), never pass it. A knee that was the generator's, or steps that ended before any
limit, bound the capacity from below only: enough to pass when that bound already meets the objective, never enough
to fail."""

from __future__ import annotations

from harness.capacity.knee import KneeLimits, find_knee
from harness.capacity.steps import steps_of
from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History
from harness.thresholds import GENERATOR_MACHINE_BUSY_PCT


@checker("capacity-headroom")
def capacity_headroom(history: History, *, expected_user_rps: dict[str, float],
                      expected_background_rps: dict[str, float], objective_x: float, slo_s: dict[str, float],
                      failed_pct: float, shortfall_pct: float, generator_busy_pct: float,
                      machine_busy_pct: float = GENERATOR_MACHINE_BUSY_PCT,
                      apiservers_up: int | None = None) -> Verdict:
    """The steps recorded with `apiservers_up` serving (None: all steps) against the expected users' requests per
    second (by SLO class) and the nodes' (`expected_background_rps`): pass when the users' multiple the cluster
    carried meets `objective_x`, fail when the cluster's own knee is below it, unknown when what was found is only a
    lower bound under it or the steps ran beside fewer nodes than expected. The limits a step is judged by are
    KneeLimits' fields (plain values, so a saved History is judged again with them)."""
    limits = KneeLimits(slo_s, failed_pct, shortfall_pct, generator_busy_pct, machine_busy_pct)
    where = "" if apiservers_up is None else f" with {apiservers_up} apiservers serving"
    steps = steps_of(history, apiservers_up=apiservers_up)
    if not steps:
        return Verdict("capacity-headroom", Status.UNKNOWN, f"no step of the rising load was recorded{where}", {})
    wanted = round(sum(rate for rate in expected_user_rps.values() if rate > 0), 3)
    if wanted <= 0:
        return Verdict("capacity-headroom", Status.UNKNOWN, "the expected load names no user requests to multiply", {})
    knee = find_knee(steps, limits)
    headroom = round(knee.carried_user_rps / wanted, 3)
    figures = {"headroom_x": headroom, "carried_user_rps": round(knee.carried_user_rps, 3), "expected_user_rps":
               wanted, "carried_rps": knee.carried_rps, "expected_background_rps": expected_background_rps,
               "stopped_by": knee.stopped_by, "steps": len(steps), "knee_step": knee.at_step,
               "busiest": None if knee.busiest is None else {"part": knee.busiest[0], "share": knee.busiest[1]},
               "apiservers_up": apiservers_up}
    had = {klass: min(s.background_rps.get(klass, 0.0) for s in steps) for klass in expected_background_rps}
    fewer = [f"{klass} {had[klass]:g}/s of {rate:g}/s" for klass, rate in sorted(expected_background_rps.items())
             if had[klass] < rate]
    lighter = f"the steps ran beside less of the nodes' load than expected ({', '.join(fewer)})"
    carried_text = f"carried {knee.carried_user_rps:.1f} user requests/s beside the nodes' renewals, against " \
                   f"{wanted:g} expected{where}: headroom {headroom:g}x (objective {objective_x:g}x)"
    if knee.cluster_limit:
        ended = f"the cluster's knee at step {knee.at_step + 1} of {len(steps)}: {knee.stopped_by}"
        if knee.busiest is not None:
            ended += f" (busiest: {knee.busiest[0]} at {knee.busiest[1]:.0%})"
        if headroom < objective_x:  # more nodes only bring the knee sooner: a lighter background fails it too
            return Verdict("capacity-headroom", Status.FAIL, f"{carried_text}; {ended}"
                           + (f"; {lighter}, which only spared it" if fewer else ""), figures)
        if not fewer:
            return Verdict("capacity-headroom", Status.PASS, f"{carried_text}; {ended}", figures)
    if fewer:
        return Verdict("capacity-headroom", Status.UNKNOWN, f"{lighter}: what they carried says nothing of the "
                       f"expected load's headroom ({carried_text})", figures)
    bound = knee.stopped_by or f"the {len(steps)} steps ended before the cluster showed a limit"
    if headroom >= objective_x:
        return Verdict("capacity-headroom", Status.PASS, f"at least: {carried_text}; {bound}", figures)
    return Verdict("capacity-headroom", Status.UNKNOWN, f"only a lower bound: {carried_text}; {bound}", figures)


def headroom_figure(verdicts: list[Verdict]) -> float | None:
    """The one capacity_headroom_x figure of the headroom verdicts a scenario judged (every apiserver up, the busiest
    one down): the smallest headroom of those that failed, else None when one is unknown (a lower bound under the
    objective says nothing of the cluster), else the smallest headroom."""
    failed = [v.figures["headroom_x"] for v in verdicts if v.status is Status.FAIL]
    if failed:
        return min(failed)
    if not verdicts or any(v.status is Status.UNKNOWN for v in verdicts):
        return None
    return min(v.figures["headroom_x"] for v in verdicts)
