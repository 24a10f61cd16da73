import datetime
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.gate import Decision, Policy, PolicyError, evaluate
from harness.report.results import ResultsError, history_slug, load_results

ROOT = Path(__file__).resolve().parents[2]


def write_run(directory: Path, cases: dict[str, tuple[str, dict]]) -> Path:
    """cases: nodeid -> (outcome, {checker: (status, figures)})"""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for nodeid, (outcome, verdicts) in cases.items():
        path, name = nodeid.split("::")
        classname = path.removesuffix(".py").replace("/", ".")
        body = {"failed": '<failure message="boom"/>', "skipped": '<skipped message="no"/>'}.get(outcome, "")
        rows.append(f'<testcase classname="{classname}" name="{name}">{body}</testcase>')
        with (directory / f"{history_slug(nodeid)}.jsonl").open("w") as history:
            for checker, (status, figures) in verdicts.items():
                history.write(json.dumps({"kind": "event", "t": 1.0, "type": "verdict", "checker": checker,
                                          "status": status, "explanation": "", "figures": figures}) + "\n")
    (directory / "junit.xml").write_text(f'<testsuites><testsuite>{"".join(rows)}</testsuite></testsuites>')
    return directory


POLICY = Policy(required_suites=["etcd", "self_healing"])
GOOD = {
    "scenarios/etcd/test_etcd_quorum.py::test_a": ("passed", {"durability": ("pass", {"lost": 0})}),
    "scenarios/self_healing/test_self_healing.py::test_b[etcd]": (
        "passed", {"availability": ("pass", {"availability_pct": 100.0, "longest_outage_s": 0.0})}),
}


def test_a_clean_run_is_promoted(tmp_path):
    result = evaluate(POLICY, load_results(write_run(tmp_path, GOOD)))
    assert result.decision is Decision.PROMOTE and {r.verdict for r in result.rows} == {"ok"}


def test_a_failed_required_scenario_blocks(tmp_path):
    cases = dict(GOOD)
    cases["scenarios/etcd/test_etcd_quorum.py::test_a"] = ("failed", {"durability": ("fail", {"lost": 3})})
    result = evaluate(POLICY, load_results(write_run(tmp_path, cases)))
    assert result.decision is Decision.BLOCK
    assert any("3 acknowledged writes lost" in reason for reason in result.reasons)


def test_a_figure_beyond_the_policy_blocks_even_if_the_test_passed(tmp_path):
    cases = dict(GOOD)
    cases["scenarios/self_healing/test_self_healing.py::test_b[etcd]"] = (
        "passed", {"availability": ("pass", {"availability_pct": 99.0})})
    assert evaluate(POLICY, load_results(write_run(tmp_path, cases))).decision is Decision.BLOCK


def test_a_missing_required_suite_or_an_unknown_verdict_cannot_be_judged(tmp_path):
    only_etcd = {k: v for k, v in GOOD.items() if "etcd_quorum" in k}
    assert evaluate(POLICY, load_results(write_run(tmp_path / "a", only_etcd))).decision is Decision.UNJUDGED
    cases = dict(GOOD)
    cases["scenarios/etcd/test_etcd_quorum.py::test_a"] = ("passed", {"durability": ("unknown", {})})
    assert evaluate(POLICY, load_results(write_run(tmp_path / "b", cases))).decision is Decision.UNJUDGED


def test_a_known_failure_is_allowed_until_it_expires(tmp_path):
    cases = dict(GOOD)
    cases["scenarios/etcd/test_etcd_quorum.py::test_a"] = ("failed", {})
    results = load_results(write_run(tmp_path, cases))
    policy = Policy(required_suites=["etcd", "self_healing"], known_failures=[
        {"test": "scenarios/etcd/", "until": "2026-12-31", "reason": "ticket 42"}])
    assert evaluate(policy, results, today=datetime.date(2026, 12, 1)).decision is Decision.PROMOTE
    late = evaluate(policy, results, today=datetime.date(2027, 1, 1))
    assert late.decision is Decision.BLOCK and "expired" in late.reasons[0]


def test_a_regression_against_the_baseline_blocks(tmp_path):
    before = load_results(write_run(tmp_path / "before", GOOD))
    worse = dict(GOOD)
    worse["scenarios/self_healing/test_self_healing.py::test_b[etcd]"] = (
        "passed", {"availability": ("pass", {"availability_pct": 99.6, "longest_outage_s": 4.0})})
    result = evaluate(POLICY, load_results(write_run(tmp_path / "after", worse)), baseline=before)
    assert result.decision is Decision.BLOCK and "regressed" in result.reasons[0]
    same = evaluate(POLICY, load_results(write_run(tmp_path / "same", GOOD)), baseline=before)
    assert same.decision is Decision.PROMOTE


def test_invalid_policies_say_what_is_wrong(tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text("required_suites: []\nthreshold: {}\n")
    with pytest.raises(PolicyError) as info:
        Policy.load(path)
    assert "required_suites" in info.value.problem and "threshold: unknown key" in info.value.problem
    with pytest.raises(PolicyError, match="does not exist"):
        Policy.load(tmp_path / "nope.yaml")


def test_missing_results_cannot_be_judged(tmp_path):
    with pytest.raises(ResultsError, match="no junit.xml"):
        load_results(tmp_path)


def test_the_shipped_policy_is_valid():
    assert "etcd" in Policy.load(ROOT / "gate.yaml").required_suites


@pytest.mark.parametrize("cases, code", [(GOOD, 0), ({}, 2)], ids=["promote", "no-results"])
def test_cli_exit_codes_and_outputs(tmp_path, cases, code):
    policy = tmp_path / "policy.yaml"
    policy.write_text("required_suites: [etcd, self_healing]\n")
    results = write_run(tmp_path / "run", cases) if cases else tmp_path / "empty"
    results.mkdir(exist_ok=True)
    out = subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(policy), "--results", str(results)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == code, out.stdout + out.stderr
    if code == 0:
        assert json.loads((results / "gate.json").read_text())["decision"] == "promote"
        assert "<testsuite" in (results / "gate-junit.xml").read_text()
