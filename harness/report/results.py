"""A run's results as the gate and the report read them: the run's JUnit file (pass/fail per scenario) joined with
the verdicts, figures and the result record each scenario wrote into its History, and the run's own record
(run.json: its id and the scenarios it planned, fixtures/evidence.py)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import QuorumError
from harness.objectives.measurement import Measurement


class ResultsError(QuorumError):
    """The results of a run are missing or unreadable: the run cannot be judged."""


def history_slug(nodeid: str) -> str:
    """The file name (without suffix) a scenario's History gets (fixtures/observe.py uses the same)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[-150:]


@dataclass
class ScenarioResult:
    nodeid: str
    suite: str
    outcome: str  # passed | failed | error | skipped
    message: str = ""
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    measures: list[Measurement] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what in its History could not be read
    recorded: list[dict[str, Any]] = field(default_factory=list)  # its `result` records (fixtures/evidence.py)
    has_history: bool = False

    @property
    def name(self) -> str:
        return self.nodeid.split("::", 1)[-1]


def _outcome(case: ElementTree.Element) -> tuple[str, str]:
    for tag, outcome in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        element = case.find(tag)
        if element is not None:
            return outcome, (element.get("message") or "")[:500]
    return "passed", ""


CLUSTER_FILE = "cluster.json"  # what the run's clusters said of themselves (Target.describe), beside its Histories
RUN_FILE = "run.json"  # the run's id and the scenarios it planned (fixtures/evidence.py), beside its Histories


def load_cluster(directory: Path) -> dict[str, str]:
    """The cluster (or target) a run judged, as it described itself; empty for a run that wrote none."""
    try:
        data = json.loads((directory / CLUSTER_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def load_results(directory: Path) -> list[ScenarioResult]:
    junit = directory / "junit.xml"
    if not junit.is_file():
        raise ResultsError(f"no junit.xml in {directory}: the run did not finish or wrote its results elsewhere",
                           "run `pytest scenarios/` (it writes reports/histories/<time>/junit.xml) or pass --results DIR")
    try:
        root = ElementTree.parse(junit).getroot()
    except ElementTree.ParseError as error:
        raise ResultsError(f"{junit} is not valid JUnit XML: {error}", "re-run the suites") from None
    results = []
    for case in root.iter("testcase"):
        classname = case.get("classname", "")
        nodeid = classname.replace(".", "/") + ".py::" + case.get("name", "")
        parts = classname.split(".")
        suite = parts[1] if len(parts) > 2 and parts[0] == "scenarios" else parts[0]
        outcome, message = _outcome(case)
        result = ScenarioResult(nodeid, suite, outcome, message)
        history = directory / f"{history_slug(nodeid)}.jsonl"
        if history.is_file() and not history.is_symlink():
            result.has_history = True
            _read_history(history, result)
        results.append(result)
    if not results:
        raise ResultsError(f"{junit} holds no test cases", "re-run the suites")
    return results


def _read_history(path: Path, result: ScenarioResult) -> None:
    """The verdicts, figures and measurements a scenario recorded; a line that is not what it should be is noted
    in result.problems (the gate cannot judge on it), never a crash."""
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            result.problems.append(f"{path.name}:{number} is not JSON")
            continue
        if not isinstance(record, dict):
            result.problems.append(f"{path.name}:{number} is not a record")
            continue
        kind = record.get("type")
        try:
            if kind == "verdict":
                if not isinstance(record.get("checker"), str) or not isinstance(record.get("figures", {}), dict):
                    raise ValueError("a verdict without a checker or with figures that are not a mapping")
                result.verdicts.append(record)
                for key, value in record.get("figures", {}).items():
                    result.figures.setdefault(f"{record['checker']}.{key}", value)
            elif kind == "figures":
                result.figures.update({k: v for k, v in record.items() if k not in ("kind", "t", "type")})
            elif kind == "measure":
                result.measures.append(Measurement.from_record(record))
            elif record.get("kind") == "result":
                result.recorded.append(record)
        except (KeyError, TypeError, ValueError) as error:
            result.problems.append(f"{path.name}:{number}: {kind} record unreadable ({error})")


@dataclass(frozen=True)
class RunRecord:
    """What a run recorded of itself (run.json, fixtures/evidence.py)."""

    run_id: str
    planned: dict[str, list[str]]  # suite -> the scenarios collected before any selection
    files: dict[str, list[str]]  # suite -> its scenario files
    collected_files: list[str]
    backend: str = ""
    profile: str = ""
    measures: dict[str, list[str]] = field(default_factory=dict)  # node id -> the measures it declares


def load_run(directory: Path) -> RunRecord | None:
    """The run's record, or None when the directory has none (or one that is not a run's record)."""
    path = directory / RUN_FILE
    try:
        data = json.loads(path.read_text())
        record = RunRecord(str(data["run_id"]), {str(s): [str(i) for i in ids] for s, ids in data["planned"].items()},
                           {str(s): [str(f) for f in fs] for s, fs in data["files"].items()},
                           [str(f) for f in data["collected_files"]], str(data.get("backend", "")),
                           str(data.get("profile", "")),
                           {str(n): [str(m) for m in names] for n, names in data.get("measures", {}).items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    return record if record.run_id else None
