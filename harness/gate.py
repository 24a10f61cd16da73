"""The promotion gate: a run's results against a policy -> promote (0), block (1) or cannot judge (2)."""

from __future__ import annotations

import datetime
import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from xml.sax.saxutils import quoteattr

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import QuorumError
from harness.report.results import ScenarioResult
from harness.thresholds import AVAILABILITY_PCT


class PolicyError(QuorumError):
    """The gate policy file is invalid."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Thresholds(Strict):
    availability_pct: float | None = Field(AVAILABILITY_PCT, ge=0, le=100)  # ANCHORS
    max_failover_s: float | None = Field(None, gt=0)
    lost_writes: int | None = Field(0, ge=0)


class KnownFailure(Strict):
    test: str = Field(min_length=1, description="a scenario node id, or a prefix of one")
    until: datetime.date
    reason: str = Field(min_length=1)


class Policy(Strict):
    required_suites: list[str] = Field(min_length=1)
    thresholds: Thresholds = Thresholds()
    known_failures: list[KnownFailure] = Field(default_factory=list)
    baseline_tolerance_pct: float = Field(10.0, ge=0)

    @classmethod
    def load(cls, path: Path) -> "Policy":
        if not path.is_file():
            raise PolicyError(f"policy file {path} does not exist", "give --policy gate.yaml (see docs/gate.md)")
        try:
            return cls.model_validate(yaml.safe_load(path.read_text()))
        except yaml.YAMLError as error:
            raise PolicyError(f"{path} is not valid YAML: {error}", f"fix the YAML in {path}") from None
        except ValidationError as error:
            lines = []
            for problem in error.errors():
                where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
                text = "unknown key" if problem["type"] == "extra_forbidden" else problem["msg"]
                lines.append(f"  - {where}: {text}")
            raise PolicyError(f"{path} is invalid:\n" + "\n".join(lines), "see docs/gate.md for every key") from None


class Decision(int, Enum):
    PROMOTE = 0
    BLOCK = 1
    UNJUDGED = 2


@dataclass
class Row:
    suite: str
    scenario: str
    outcome: str
    figures: str
    verdict: str  # ok | block | known failure | unjudged
    reason: str = ""


@dataclass
class GateResult:
    decision: Decision
    rows: list[Row] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({"decision": self.decision.name.lower(), "exit_code": self.decision.value,
                           "reasons": self.reasons, "rows": [asdict(r) for r in self.rows]}, indent=1)

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
            cases.append(f"  <testcase classname={quoteattr('gate.' + row.suite)} name={quoteattr(row.scenario)}>{body}</testcase>")
        failures = sum(r.verdict == "block" for r in self.rows)
        errors = sum(r.verdict == "unjudged" for r in self.rows)
        return (f'<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="quorum-gate" tests="{len(self.rows)}" '
                f'failures="{failures}" errors="{errors}">\n' + "\n".join(cases) + "\n</testsuite>\n")


_KEY_FIGURES = ("availability.availability_pct", "failover.failover_s", "durability.lost",
                "write-outage.longest_gap_s", "availability.longest_outage_s")


def _figure_text(result: ScenarioResult) -> str:
    return ", ".join(f"{k.split('.')[-1]}={result.figures[k]}" for k in _KEY_FIGURES if k in result.figures)


def _threshold_breaches(result: ScenarioResult, thresholds: Thresholds) -> list[str]:
    breaches = []
    figures = result.figures
    if thresholds.availability_pct is not None and figures.get("availability.availability_pct") is not None \
            and figures["availability.availability_pct"] < thresholds.availability_pct:
        breaches.append(f"availability {figures['availability.availability_pct']}% < {thresholds.availability_pct}%")
    if thresholds.max_failover_s is not None and figures.get("failover.failover_s") is not None \
            and figures["failover.failover_s"] > thresholds.max_failover_s:
        breaches.append(f"failover {figures['failover.failover_s']}s > {thresholds.max_failover_s}s")
    if thresholds.lost_writes is not None and (figures.get("durability.lost") or 0) > thresholds.lost_writes:
        breaches.append(f"{figures['durability.lost']} acknowledged writes lost")
    return breaches


def _regressions(result: ScenarioResult, baseline: ScenarioResult | None, tolerance_pct: float) -> list[str]:
    if baseline is None:
        return []
    found = []
    for key, worse_when_higher in (("failover.failover_s", True), ("availability.longest_outage_s", True),
                                   ("write-outage.longest_gap_s", True), ("availability.availability_pct", False)):
        now, then = result.figures.get(key), baseline.figures.get(key)
        if not isinstance(now, (int, float)) or not isinstance(then, (int, float)):
            continue
        if not worse_when_higher:  # compare unavailability: 99.9 -> 99.0 is ten times worse, not 1 % worse
            now, then = 100 - now, 100 - then
        # a noise floor (0.5 s, 0.1 percentage points) keeps timing jitter from blocking a promotion
        floor = 0.1 if not worse_when_higher else 0.5
        if now > then * (1 + tolerance_pct / 100) + floor:
            found.append(f"{key.split('.')[-1]} regressed beyond {tolerance_pct}% against the baseline "
                         f"({result.figures[key]} vs {baseline.figures[key]})")
    return found


def evaluate(policy: Policy, results: list[ScenarioResult], baseline: list[ScenarioResult] | None = None,
             today: datetime.date | None = None) -> GateResult:
    today = today or datetime.date.today()
    gate = GateResult(Decision.PROMOTE)
    by_baseline = {r.nodeid: r for r in baseline or []}
    for suite in policy.required_suites:
        ran = [r for r in results if r.suite == suite and r.outcome != "skipped"]
        if not ran:
            gate.reasons.append(f"required suite {suite} has no executed scenario")
            gate.rows.append(Row(suite, "(suite)", "missing", "", "unjudged", "no executed scenario"))
    for result in results:
        row = Row(result.suite, result.name, result.outcome, _figure_text(result), "ok")
        if result.outcome == "skipped":
            row.verdict, row.reason = "ok", f"skipped: {result.message}"
            gate.rows.append(row)
            continue
        problems = []
        if result.outcome in ("failed", "error"):
            problems.append(f"{result.outcome}: {result.message}")
        problems += _threshold_breaches(result, policy.thresholds)
        problems += _regressions(result, by_baseline.get(result.nodeid), policy.baseline_tolerance_pct)
        unknown = [v["checker"] for v in result.verdicts if v.get("status") == "unknown"]
        known = next((k for k in policy.known_failures if result.nodeid.startswith(k.test)), None)
        if problems and known is not None and known.until >= today:
            row.verdict, row.reason = "known failure", f"{known.reason} (allowed until {known.until})"
        elif problems:
            expired = f" (known failure expired {known.until})" if known is not None else ""
            row.verdict, row.reason = "block", "; ".join(problems) + expired
            if result.suite in policy.required_suites:
                gate.reasons.append(f"{result.nodeid}: {row.reason}")
        elif unknown:
            row.verdict, row.reason = "unjudged", f"checkers could not judge: {', '.join(unknown)}"
            gate.reasons.append(f"{result.nodeid}: {row.reason}")
        gate.rows.append(row)
    required = [r for r in gate.rows if r.suite in policy.required_suites]
    if any(r.verdict == "block" for r in required):  # a certain failure blocks whatever else is unknown
        gate.decision = Decision.BLOCK
    elif any(r.verdict == "unjudged" for r in required):
        gate.decision = Decision.UNJUDGED
    return gate
