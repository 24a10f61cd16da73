"""Judging a run's results by a policy: each scenario's outcome, each measured figure against its objective (with
the bound its configuration promises beside it), the figures a scenario that ran should have recorded, and, with
a baseline, regressions."""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from fnmatch import fnmatchcase
from xml.sax.saxutils import quoteattr

from harness.gate.policy import Policy
from harness.objectives.catalog import MEASURES
from harness.objectives.judge import meets
from harness.objectives.measurement import Measurement
from harness.report.results import ScenarioResult


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
    verdict: str = "ok"  # ok | block | known failure | unjudged
    reason: str = ""


@dataclass
class GateResult:
    decision: Decision
    rows: list[Row] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    cluster: dict[str, str] = field(default_factory=dict)  # what was judged: name or target, endpoint, versions

    def to_json(self) -> str:
        return json.dumps({"decision": self.decision.name.lower(), "exit_code": self.decision.value,
                           "cluster": self.cluster, "reasons": self.reasons, "rows": [asdict(r) for r in self.rows]},
                          indent=1)

    def to_junit(self) -> str:
        cases = []
        for row in self.rows:
            body = ""
            if row.verdict == "block":
                body = f"<failure message={quoteattr(row.reason)}/>"
            elif row.verdict == "unjudged":
                body = f"<error message={quoteattr(row.reason)}/>"
            elif row.verdict == "known failure":
                body = f"<skipped message={quoteattr(row.reason)}/>"
            name = row.scenario + (f" {row.measure}" if row.measure else "")
            cases.append(f"  <testcase classname={quoteattr('gate.' + row.suite)} name={quoteattr(name)}>{body}</testcase>")
        failures = sum(r.verdict == "block" for r in self.rows)
        errors = sum(r.verdict == "unjudged" for r in self.rows)
        return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="quorum-gate" tests="{len(self.rows)}" '
                f'failures="{failures}" errors="{errors}">\n' + "\n".join(cases) + "\n</testsuite>\n")


def _text(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def expected_measures(nodeid: str) -> list[str]:
    """The measures a scenario records whenever it runs (harness/objectives/catalog.py)."""
    return [name for name, spec in MEASURES.items() if any(fnmatchcase(nodeid, p) for p in spec.scenarios)]


def _measure_rows(result: ScenarioResult, policy: Policy) -> list[Row]:
    rows = []
    for measurement in result.measures:
        verdict = meets(measurement, policy.objectives)
        row = Row(result.suite, result.name, result.outcome, measurement.label, _text(measurement.value),
                  _text(verdict.figures.get("objective")), _text(measurement.bound))
        if measurement.value is not None and not math.isfinite(measurement.value):
            row.verdict, row.reason = "unjudged", f"{measurement.label} is {measurement.value}, not a number"
        elif verdict.status.value == "fail":
            row.verdict, row.reason = "block", verdict.explanation
        elif verdict.status.value == "unknown":
            row.verdict, row.reason = "unjudged", verdict.explanation
        rows.append(row)
    if result.outcome in ("passed", "failed", "error"):
        recorded = {m.name for m in result.measures}
        for name in expected_measures(result.nodeid):
            if name not in recorded:
                rows.append(Row(result.suite, result.name, result.outcome, name, verdict="unjudged",
                                reason=f"the scenario ran but recorded no {name}"))
    return rows


def _regressions(result: ScenarioResult, baseline: ScenarioResult | None, tolerance_pct: float) -> list[str]:
    if baseline is None:
        return []
    before = {m.label: m for m in baseline.measures if m.value is not None and math.isfinite(m.value)}
    found = []
    for now in result.measures:
        then = before.get(now.label)
        if then is None or now.value is None or not math.isfinite(now.value):
            continue
        higher_is_better = MEASURES[now.name].higher_is_better
        worse, was = (100 - now.value, 100 - then.value) if now.name == "availability_pct" else \
            ((-now.value, -then.value) if higher_is_better else (now.value, then.value))
        # a noise floor (0.5 s, 0.1 percentage points, 1 count) keeps timing jitter from blocking a promotion
        floor = {"s": 0.5, "%": 0.1}.get(MEASURES[now.name].unit, 1.0)
        if worse > max(was, 0) * (1 + tolerance_pct / 100) + floor:
            found.append(f"{now.label} regressed beyond {tolerance_pct}% against the baseline "
                         f"({now.value:g} vs {then.value:g})")
    return found


def evaluate(policy: Policy, results: list[ScenarioResult], baseline: list[ScenarioResult] | None = None,
             today: datetime.date | None = None) -> GateResult:
    today = today or datetime.date.today()
    gate = GateResult(Decision.PROMOTE)
    by_baseline = {r.nodeid: r for r in baseline or []}
    for suite in policy.required_suites:
        if not [r for r in results if r.suite == suite and r.outcome != "skipped"]:
            gate.reasons.append(f"required suite {suite} has no executed scenario")
            gate.rows.append(Row(suite, "(suite)", "missing", verdict="unjudged", reason="no executed scenario"))
    for result in results:
        row = Row(result.suite, result.name, result.outcome)
        if result.outcome == "skipped":
            row.reason = f"skipped: {result.message}"
            gate.rows.append(row)
            continue
        rows = _measure_rows(result, policy)
        problems = [f"{result.outcome}: {result.message}"] if result.outcome in ("failed", "error") else []
        problems += [r.reason for r in rows if r.verdict == "block"]
        problems += _regressions(result, by_baseline.get(result.nodeid), policy.baseline_tolerance_pct)
        unjudged = [r.reason for r in rows if r.verdict == "unjudged"] + result.problems
        unjudged += [f"checker {v['checker']} could not judge" for v in result.verdicts if v.get("status") == "unknown"]
        known = next((k for k in policy.known_failures if result.nodeid == k.test), None)
        if problems and known is not None and known.until >= today:
            row.verdict, row.reason = "known failure", f"{known.reason} (allowed until {known.until})"
            rows = [r for r in rows if r.verdict != "block"]
        elif problems:
            expired = f" (known failure expired {known.until})" if known is not None else ""
            row.verdict, row.reason = "block", "; ".join(problems) + expired
        elif unjudged:
            row.verdict, row.reason = "unjudged", "; ".join(unjudged)
        if row.verdict in ("block", "unjudged") and result.suite in policy.required_suites:
            gate.reasons.append(f"{result.nodeid}: {row.reason}")
        gate.rows += [row, *rows]
    required = [r for r in gate.rows if r.suite in policy.required_suites]
    if any(r.verdict == "block" for r in required):  # a certain failure blocks whatever else is unknown
        gate.decision = Decision.BLOCK
    elif any(r.verdict == "unjudged" for r in required):
        gate.decision = Decision.UNJUDGED
    return gate
