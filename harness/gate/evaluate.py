"""Judging a run's results by a policy: each scenario's outcome, each measured figure against its objective (with
the bound its configuration promises beside it), the figures a scenario that ran should have recorded, and, with
a baseline, regressions."""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import asdict, dataclass, field
from enum import Enum
from xml.sax.saxutils import quoteattr

from harness.gate.baseline import regression
from harness.gate.evidence import (DURABILITY, READ_ONLY, Unjudged, judged_value, recorded_problem, skip_judged,
                                   unmeasured, unplanned)
from harness.gate.policy import Policy
from harness.objectives.judge import meets
from harness.objectives.measurement import Measurement
from harness.report.results import RUN_FILE, RunRecord, ScenarioResult


class Decision(int, Enum):
    PROMOTE = 0
    BLOCK = 1
    UNJUDGED = 2


@dataclass
class Row:
    suite: str
    scenario: str
    outcome: str
    measure: str = ""  # empty: the scenario's own outcome
    figure: str = ""
    objective: str = ""
    bound: str = ""  # what the cluster's configuration promises
    verdict: str = "ok"  # ok | block | known failure | unjudged | not judged (harmless, listed) | sample
    reason: str = ""
    nodeid: str = ""  # the scenario's, on its own row (the report links it to its History)


@dataclass
class GateResult:
    decision: Decision
    rows: list[Row] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    cluster: dict[str, str] = field(default_factory=dict)  # what was judged: name or target, endpoint, versions
    not_judged: list[dict[str, str]] = field(default_factory=list)  # what was not judged, and why
    baseline: str = ""  # the run compared against, if any
    notes: list[str] = field(default_factory=list)  # what the decision must say besides its rows

    def to_json(self) -> str:
        return json.dumps({"decision": self.decision.name.lower(), "exit_code": self.decision.value,
                           "cluster": self.cluster, "baseline": self.baseline, "notes": self.notes,
                           "reasons": self.reasons,
                           "not_judged": self.not_judged, "rows": [asdict(r) for r in self.rows]}, indent=1)

    def to_junit(self) -> str:
        """The rows as JUnit XML (a CI system's test report): block is a failure, unjudged an error, a known failure
        or a harmless skip skipped."""
        cases = []
        tags = {"block": "failure", "unjudged": "error", "known failure": "skipped", "not judged": "skipped"}
        for row in self.rows:
            tag = tags.get(row.verdict)
            body = f"<{tag} message={quoteattr(xml_text(row.reason))}/>" if tag else ""
            name = xml_text(row.scenario + (f" {row.measure}" if row.measure else ""))
            cases.append(f"  <testcase classname={quoteattr(xml_text('gate.' + row.suite))} name={quoteattr(name)}>"
                         f"{body}</testcase>")
        failures = sum(r.verdict == "block" for r in self.rows)
        errors = sum(r.verdict == "unjudged" for r in self.rows)
        return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="quorum-gate" tests="{len(self.rows)}" '
                f'failures="{failures}" errors="{errors}">\n' + "\n".join(cases) + "\n</testsuite>\n")


_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(text: str) -> str:
    """Text XML 1.0 can hold: the characters it forbids (most control characters) shown as U+FFFD."""
    return _NOT_IN_XML.sub("\ufffd", text)


def _text(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _measure_rows(result: ScenarioResult, policy: Policy, declared: list[str]) -> list[Row]:
    """Each measurement judged by its objective; a measure the scenario declares but did not record, unjudged."""
    rows = []
    for measurement in result.measures:
        verdict = meets(measurement, policy.objectives)
        row = Row(result.suite, result.name, result.outcome, measurement.label, _text(measurement.value),
                  _text(verdict.figures.get("objective")), _text(measurement.bound))
        by_percentile = measurement.name in policy.samples and policy.samples[measurement.name].judge != "worst"
        if measurement.value is not None and not math.isfinite(measurement.value):
            row.verdict, row.reason = "unjudged", f"{measurement.label} is {measurement.value}, not a number"
        elif verdict.status.value == "fail" and by_percentile and measurement.value is not None:
            row.verdict, row.reason = "sample", f"one sample, judged with the others by their " \
                                                f"{policy.samples[measurement.name].judge}"
        elif verdict.status.value == "fail":
            row.verdict, row.reason = "block", verdict.explanation
        elif verdict.status.value == "unknown":
            row.verdict, row.reason = "unjudged", verdict.explanation
        rows.append(row)
    if result.outcome in ("passed", "failed", "error"):
        recorded = {m.name for m in result.measures}
        for name in declared:
            if name not in recorded:
                rows.append(Row(result.suite, result.name, result.outcome, name, verdict="unjudged",
                                reason=f"the scenario ran but recorded no {name}"))
    return rows


Earlier = dict[tuple[str, str], list[float]]  # (scenario, measure label) -> its values in earlier runs, oldest first


def _regressions(result: ScenarioResult, earlier: Earlier, tolerance_pct: float) -> list[str]:
    """The figures of a scenario that got worse than the promoted runs before it beyond their noise."""
    found = []
    for now in result.measures:
        values = earlier.get((result.nodeid, now.label), [])
        if now.value is None or not values:
            continue
        regressed = regression(now.name, now.label, now.value, values, tolerance_pct)
        if regressed is not None:
            found.append(regressed.text())
    return found


def figures_of(results: list[ScenarioResult]) -> Earlier:
    """A run's figures, keyed as Earlier is (one value each)."""
    return {(r.nodeid, m.label): [m.value] for r in results for m in r.measures if m.value is not None}


def evaluate(policy: Policy, results: list[ScenarioResult], run: RunRecord | None,
             earlier: Earlier | None = None, today: datetime.date | None = None) -> GateResult:
    """The decision on a run: PROMOTE only when every scenario of every required suite ran, was recorded by Quorum
    for this run, and met every objective, and every objective those suites can measure was measured
    (harness/gate/evidence.py); BLOCK when something certainly failed; UNJUDGED otherwise."""
    today = today or datetime.date.today()
    gate = GateResult(Decision.PROMOTE)
    if run is None:
        gate.decision = Decision.UNJUDGED
        gate.reasons.append(f"no {RUN_FILE} beside junit.xml: these are not the results of a run Quorum recorded")
        gate.rows = [Row(r.suite, r.name, r.outcome, verdict="unjudged", reason=f"no {RUN_FILE}") for r in results]
        return gate
    for suite, missing in unplanned(run, results, policy):
        gate.rows.append(_unjudged_row(suite, missing.what, "not run", missing))
    executed = []
    for result in results:
        problem = recorded_problem(result, run)
        if problem:
            gate.rows.append(Row(result.suite, result.name, result.outcome, verdict="unjudged", reason=problem,
                                 nodeid=result.nodeid))
            continue
        if result.outcome == "skipped":
            if result.suite in policy.required_suites:
                gate.rows.append(_unjudged_row(result.suite, result.name, "skipped", skip_judged(result, run, policy),
                                               result.nodeid))
            else:
                gate.rows.append(Row(result.suite, result.name, "skipped", verdict="not judged",
                                     reason=f"skipped: {result.message} (not a required suite)", nodeid=result.nodeid))
            continue
        executed.append(result)
        gate.rows += _judged_rows(result, policy, earlier or {}, today, run.measures.get(result.nodeid, []))
    gate.rows += _percentile_rows(executed, policy)
    required_executed = [r for r in executed if r.suite in policy.required_suites]
    read_only = any(r.verdict == "not judged" and READ_ONLY in r.reason for r in gate.rows)
    if read_only:
        gate.notes.append("only read-only checks were judged: the target is not disposable, so its destructive "
                          "scenarios were skipped (read_only_when_not_disposable)")
    for missing in unmeasured(required_executed, policy):
        if read_only and not missing.harmless:  # measured only by the destructive scenarios a read-only run skips
            missing = Unjudged(missing.what, f"{missing.why} ({READ_ONLY})", True)
        gate.rows.append(_unjudged_row("objectives", missing.what, "not measured", missing))
    required = [r for r in gate.rows if r.suite in (*policy.required_suites, "objectives")]
    gate.reasons += [f"{r.suite}: {r.scenario}{' ' + r.measure if r.measure else ''}: {r.reason}"
                     for r in required if r.verdict in ("block", "unjudged")]
    gate.not_judged = [{"suite": r.suite, "what": f"{r.scenario}{' ' + r.measure if r.measure else ''}",
                        "why": r.reason} for r in gate.rows if r.verdict in ("not judged", "unjudged")]
    if any(r.verdict == "block" for r in required):  # a certain failure blocks whatever else is unknown
        gate.decision = Decision.BLOCK
    elif any(r.verdict == "unjudged" for r in required):
        gate.decision = Decision.UNJUDGED
    return gate


def _unjudged_row(suite: str, what: str, outcome: str, unjudged: Unjudged, nodeid: str = "") -> Row:
    verdict = "block" if unjudged.blocks else "not judged" if unjudged.harmless else "unjudged"
    return Row(suite, what, outcome, verdict=verdict, reason=unjudged.why, nodeid=nodeid)


def _judged_rows(result: ScenarioResult, policy: Policy, earlier: Earlier, today: datetime.date,
                 declared: list[str]) -> list[Row]:
    """An executed scenario's row and its measures' rows. A known failure allows the scenario's failure and its
    missed objectives for a while, never a durability figure."""
    row = Row(result.suite, result.name, result.outcome, nodeid=result.nodeid)
    rows = _measure_rows(result, policy, declared)
    problems = [f"{result.outcome}: {result.message}"] if result.outcome in ("failed", "error") else []
    problems += [r.reason for r in rows if r.verdict == "block"]
    problems += _regressions(result, earlier, policy.baseline_tolerance_pct)
    unjudged = [r.reason for r in rows if r.verdict == "unjudged"] + result.problems
    unjudged += [f"checker {v['checker']} could not judge" for v in result.verdicts if v.get("status") == "unknown"]
    known = next((k for k in policy.known_failures if result.nodeid == k.test), None)
    durable = [r for r in rows if r.verdict == "block" and r.measure.split("[")[0] in DURABILITY]
    if problems and known is not None and known.until >= today and not durable:
        row.verdict, row.reason = "known failure", f"{known.reason} (allowed until {known.until})"
        rows = [r for r in rows if r.verdict != "block"]
    elif problems:
        expired = f" (known failure expired {known.until})" if known is not None and known.until < today else ""
        never = " (no known failure hides a lost write)" if durable and known is not None else ""
        row.verdict, row.reason = "block", "; ".join(problems) + expired + never
    elif unjudged:
        row.verdict, row.reason = "unjudged", "; ".join(unjudged)
    return [row, *rows]


def _percentile_rows(executed: list[ScenarioResult], policy: Policy) -> list[Row]:
    """For a measure the policy judges by a percentile of its samples: one row per label, judged on that value."""
    rows = []
    for name, samples in sorted(policy.samples.items()):
        if samples.judge == "worst":
            continue
        by_label: dict[str, list[Measurement]] = {}
        for result in executed:
            for measurement in result.measures:
                if measurement.name == name and measurement.value is not None:
                    by_label.setdefault(measurement.label, []).append(measurement)
        for label, measurements in sorted(by_label.items()):
            value = judged_value(name, [m.value for m in measurements], samples.judge)
            verdict = meets(Measurement(name, value, measurements[0].subject), policy.objectives)
            suite = next(r.suite for r in executed if any(m in r.measures for m in measurements))
            row = Row(suite, f"{samples.judge} of {len(measurements)} samples", "judged", label, _text(value),
                      _text(verdict.figures.get("objective")))
            if verdict.status.value == "fail":
                row.verdict, row.reason = "block", verdict.explanation
            rows.append(row)
    return rows
