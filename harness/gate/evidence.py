"""What counts as evidence for the gate, as pure functions of a run's results and the policy.

- A scenario's result counts only when the run recorded it: a `result` record of this run's id for that scenario in
  its History, agreeing with junit.xml (fixtures/evidence.py). A bare testcase proves nothing.
- A skip is harmless only when the target lacks what the scenario needs and the policy lets the suite run without
  it (`may_lack`), or the scenario is not in the run's profile, or the policy judges only the read-only checks of a
  target that is not disposable. An unhealthy target, a refused fault or anything else leaves it unjudged.
- A required suite needs every scenario it holds (as collected before any selection), not one of them; the policy
  may excuse some by name (`not_run`).
- Each objective the policy holds must be measured by an executed scenario of a required suite, as often as the
  policy's `samples` ask, unless the policy says it is not measured here (`not_measured`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.gate.policy import Policy
from harness.objectives.catalog import MEASURES
from harness.report.results import RunRecord, ScenarioResult
from harness.scenario.skips import SkipKind

READ_ONLY = "read-only checks only: the target is not disposable"
DURABILITY = ("lost_writes",)  # figures no known failure can hide: an acknowledged write lost always blocks


@dataclass(frozen=True)
class Unjudged:
    """What was not judged, and why; `harmless`: the policy allows it (the decision still lists it); `blocks`: what
    kept it from being judged is itself a failure of the cluster."""

    what: str
    why: str
    harmless: bool
    blocks: bool = False


def recorded_problem(result: ScenarioResult, run: RunRecord) -> str | None:
    """Why a scenario's result is not evidence of this run (None: it is)."""
    if not result.has_history:
        return "no History of this scenario: a testcase without what Quorum records is no evidence"
    mine = [r for r in result.recorded if r.get("run_id") == run.run_id and r.get("nodeid") == result.nodeid]
    if not mine:
        return f"its History holds no result of run {run.run_id} (run.json): it is not this run's evidence"
    outcomes = {r.get("outcome") for r in mine}
    expected = {"passed": {"passed"}, "skipped": {"skipped"}}.get(result.outcome, {"failed", "error"})
    if not outcomes & expected:
        return f"junit.xml says {result.outcome}, its History {sorted(map(str, outcomes))}"
    return None


def skip_judged(result: ScenarioResult, run: RunRecord, policy: Policy) -> Unjudged:
    """A skipped scenario of a required suite: harmless or not, and why."""
    skip = next((r.get("skip") for r in reversed(result.recorded) if r.get("run_id") == run.run_id
                 and r.get("outcome") == "skipped"), None) or {}
    kind, lacking = skip.get("kind"), tuple(str(x) for x in skip.get("lacking") or ())
    reason = f"skipped: {result.message}"
    if kind == SkipKind.LACKS.value and policy.lacks_allowed(result.suite, lacking):
        return Unjudged(result.nodeid, f"{reason} (the policy lets {result.suite} run without {', '.join(lacking)})",
                        True)
    if kind == SkipKind.LACKS.value:
        return Unjudged(result.nodeid, f"{reason} (the target lacks {', '.join(lacking) or 'something'}, and the "
                        f"policy does not let {result.suite} run without it: may_lack)", False)
    if kind == SkipKind.PROFILE.value:
        return Unjudged(result.nodeid, f"{reason} (not in the {run.profile or 'run'}'s profile)", True)
    if kind == SkipKind.NOT_DISPOSABLE.value and policy.read_only_when_not_disposable:
        return Unjudged(result.nodeid, f"{reason} ({READ_ONLY})", True)
    if kind == SkipKind.UNHEALTHY.value:  # it did not heal itself in the time it promises: that is a verdict
        return Unjudged(result.nodeid, f"{reason} (the target was still unhealthy when the scenario was due: a "
                        "cluster that does not heal itself between scenarios is not promoted)", False, blocks=True)
    return Unjudged(result.nodeid, f"{reason} ({kind or 'no recorded reason'}: the scenario was not judged)", False)


def unplanned(run: RunRecord, results: list[ScenarioResult], policy: Policy) -> list[tuple[str, Unjudged]]:
    """(suite, what) for each required suite's scenario or file the run left out."""
    ran = {result.nodeid for result in results}
    found = []
    for suite in policy.required_suites:
        planned = run.planned.get(suite, [])
        if not planned:
            found.append((suite, Unjudged(f"suite {suite}", "no scenario of it was collected in this run", False)))
        for path in run.files.get(suite, []):
            if path not in run.collected_files:
                found.append((suite, Unjudged(path, "its scenarios were not collected (--ignore?)", False)))
        for nodeid in planned:
            if nodeid in ran:
                continue
            excused = policy.excused(nodeid)
            why = f"not run: {excused.reason}" if excused else "not run (deselected): a required suite needs every " \
                                                               "scenario"
            found.append((suite, Unjudged(nodeid, why, bool(excused))))
    return found


def unmeasured(executed: list[ScenarioResult], policy: Policy) -> list[Unjudged]:
    """Every objective the policy holds that too few executed scenarios of its required suites measured, unless the
    policy says it is not measured here (`not_measured`)."""
    found = []
    for name in MEASURES:
        if name in policy.not_measured:
            found.append(Unjudged(f"objective {name}", "the policy says it is not measured here", True))
            continue
        wanted = policy.samples[name].min if name in policy.samples else 1
        labels: dict[str, int] = {}
        for result in executed:
            for measurement in result.measures:
                if measurement.name == name and measurement.value is not None:
                    labels[measurement.label] = labels.get(measurement.label, 0) + 1
        if not labels:
            found.append(Unjudged(f"objective {name}", "no executed scenario measured it", False))
        for label, count in sorted(labels.items()):
            if count < wanted:
                found.append(Unjudged(label, f"{count} sample(s), the policy needs {wanted}", False))
    return found


def judged_value(name: str, values: list[float], judge: str) -> float:
    """The one value of several samples the objective judges: the worst, or a percentile (nearest rank) counted
    from the best, so that p90 is the value 90 % of the samples are at or better than."""
    higher_is_better = MEASURES[name].higher_is_better
    ordered = sorted(values, reverse=higher_is_better)  # best first
    if judge == "worst":
        return ordered[-1]
    rank = max(1, math.ceil(int(judge[1:]) / 100 * len(ordered)))
    return ordered[rank - 1]
