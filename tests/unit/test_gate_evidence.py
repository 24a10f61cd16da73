"""The gate cannot be fooled by missing evidence (issue #55): each hole a crafted results directory found is shut,
and each test here fails without its rule (harness/gate/evidence.py, harness/gate/evaluate.py, the figures' and the
policy's checks, the gate's own outputs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from harness.gate import Decision, Policy
from tests.unit.test_gate import ETCD, GOOD, HEALING, MEASURED, MEASURED_HERE, judged, measured, policy_of, write_run
from harness.objectives.catalog import MEASURES

ROOT = Path(__file__).resolve().parents[2]
ETCD_FILE = ETCD.split("::")[0]
FIVE = [f"{ETCD_FILE}::test_{n}" for n in ("members_use_tls_on_peer_and_client_urls",
                                           "writes_continue_when_the_leader_of_three_dies",
                                           "without_quorum_writes_and_linearizable_reads_stop_and_nothing_is_lost",
                                           "a_removed_member_rejoins_with_a_fresh_data_directory")] + [ETCD]


NOT_MEASURED = f"not_measured: [{', '.join(sorted(set(MEASURES) - MEASURED_HERE))}]\n"


def gate(tmp_path: Path, results: Path, *options: str,
         policy: str = f"required_suites: [etcd, self_healing]\n{NOT_MEASURED}"):
    path = tmp_path / "policy.yaml"
    path.write_text(policy)
    return subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(path), "--results",
                           str(results), *options], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "300"})


def test_a_bare_junit_with_one_empty_testcase_per_suite_and_no_history_cannot_be_judged(tmp_path):
    results = tmp_path / "crafted"
    results.mkdir()
    (results / "junit.xml").write_text("<testsuites><testsuite>\n"
                                       '<testcase classname="scenarios.etcd.test_etcd_quorum" name="ok"/>\n'
                                       '<testcase classname="scenarios.self_healing.test_self_healing" name="ok"/>\n'
                                       "</testsuite></testsuites>\n")
    out = gate(tmp_path, results)
    assert out.returncode == 2 and "decision: unjudged" in out.stdout, out.stdout + out.stderr
    assert "no run.json" in out.stdout


def test_a_testcase_whose_history_holds_no_result_of_this_run_is_no_evidence(tmp_path):
    results = write_run(tmp_path / "run", GOOD, MEASURED)
    history = next(p for p in results.glob("*.jsonl") if "etcd" in p.name)
    history.write_text(history.read_text().replace('"run_id": "0123456789ab"', '"run_id": "another-run"'))
    verdict = judged(results)
    assert verdict.decision is Decision.UNJUDGED
    assert any("holds no result of run 0123456789ab" in reason for reason in verdict.reasons)


def test_a_required_scenario_skipped_for_an_unhealthy_target_blocks(tmp_path):
    """The target did not heal itself in the time it promises before the scenario was due: a failure, not a gap."""
    cases = {**GOOD, ETCD: ("skipped", {})}
    results = write_run(tmp_path / "run", cases, MEASURED, skips={ETCD: {"kind": "unhealthy", "lacking": []}})
    verdict = judged(results)
    assert verdict.decision is Decision.BLOCK and any("still unhealthy" in reason for reason in verdict.reasons)
    refused = write_run(tmp_path / "refused", cases, MEASURED, skips={ETCD: {"kind": "refused", "lacking": []}})
    assert judged(refused).decision is Decision.UNJUDGED  # the owner's limits: not the cluster's failure


def test_a_skip_for_what_the_target_lacks_is_harmless_only_where_the_policy_allows_it(tmp_path):
    cases = {**GOOD, ETCD: ("skipped", {})}
    results = write_run(tmp_path / "run", cases, MEASURED, skips={ETCD: {"kind": "lacks", "lacking": ["etcd-data"]}})
    assert judged(results).decision is Decision.UNJUDGED
    allowing = policy_of(may_lack={"etcd": ["etcd-data"]},
                         not_measured=sorted(set(MEASURES) - MEASURED_HERE | {"etcd_leader_change_s"}))
    verdict = judged(results, allowing)
    assert verdict.decision is Decision.PROMOTE, verdict.reasons
    assert any("run without etcd-data" in item["why"] for item in verdict.not_judged)


def test_a_required_suite_needs_every_scenario_it_holds_not_one_of_five(tmp_path):
    results = write_run(tmp_path / "run", GOOD, MEASURED, planned={"etcd": FIVE, "self_healing": [HEALING]})
    verdict = judged(results)
    assert verdict.decision is Decision.UNJUDGED
    assert sum("not run (deselected)" in reason for reason in verdict.reasons) == 4
    excused = policy_of(not_run=[{"test": nodeid, "reason": "left to the deep tier"} for nodeid in FIVE[:4]])
    assert judged(results, excused).decision is Decision.PROMOTE


def test_an_objective_no_executed_scenario_measured_cannot_be_judged(tmp_path):
    results = write_run(tmp_path / "run", GOOD, MEASURED)
    holding_all = Policy(required_suites=["etcd", "self_healing"])
    verdict = judged(results, holding_all)
    assert verdict.decision is Decision.UNJUDGED
    assert any("objective pod_startup_s" in reason and "no executed scenario measured it" in reason
               for reason in verdict.reasons)
    assert judged(results, policy_of()).decision is Decision.PROMOTE  # the policy says which are not measured here


def test_one_sample_where_the_policy_needs_three_cannot_be_judged(tmp_path):
    results = write_run(tmp_path / "run", GOOD, MEASURED)
    three = policy_of(samples={"etcd_leader_change_s": {"min": 3}})
    verdict = judged(results, three)
    assert verdict.decision is Decision.UNJUDGED
    assert any("1 sample(s), the policy needs 3" in reason for reason in verdict.reasons)


def test_a_percentile_judges_the_samples_together(tmp_path):
    changes = {nodeid: [dict(m) for m in records] for nodeid, records in MEASURED.items()}
    cases = dict(GOOD)
    for index, value in enumerate([1.0, 1.1, 1.2, 1.3, 1.0, 1.1, 1.2, 1.3, 1.0, 9.0]):
        nodeid = f"{ETCD}-{index}"
        cases[nodeid] = GOOD[ETCD]
        changes[nodeid] = [{"name": "etcd_leader_change_s", "value": value}, {"name": "lost_writes", "value": 0}]
    results = write_run(tmp_path / "run", cases, changes)
    worst = policy_of(samples={"etcd_leader_change_s": {"min": 3}})
    p90 = policy_of(samples={"etcd_leader_change_s": {"min": 3, "judge": "p90"}})
    assert judged(results, worst).decision is Decision.BLOCK  # the 9 s sample misses the 3.5 s objective
    verdict = judged(results, p90)
    assert verdict.decision is Decision.PROMOTE, verdict.reasons
    assert any(row.scenario == "p90 of 11 samples" and row.figure == "1.4" for row in verdict.rows)


@pytest.mark.parametrize("value", [-100, "1.5", True, "nan"], ids=["negative", "string", "boolean", "nan-text"])
def test_a_figure_that_is_no_number_in_its_range_is_never_promoted(tmp_path, value):
    results = write_run(tmp_path / "run", GOOD, measured(**{f"{ETCD}|etcd_leader_change_s": value}))
    verdict = judged(results)
    assert verdict.decision is Decision.UNJUDGED, verdict.rows


def test_a_negative_count_of_lost_writes_is_never_promoted(tmp_path):
    assert judged(write_run(tmp_path / "run", GOOD, measured(**{f"{ETCD}|lost_writes": -3}))).decision \
        is not Decision.PROMOTE


@pytest.mark.parametrize("text, says", [
    ("required_suites: [etcd]\nobjectives: {availability_pct: .inf}\n", "availability_pct"),
    ("required_suites: [etcd]\nobjectives: {lease_failover_s: .inf}\n", "lease_failover_s"),
    ("required_suites: [etcd]\nbaseline_tolerance_pct: .inf\n", "baseline_tolerance_pct"),
    ("required_suites: [etcd]\nobjectives: {lease_failover_s: '24.3'}\n", "lease_failover_s"),
    ("required_suites: [etcd]\nobjectives: {lost_writes: true}\n", "lost_writes"),
], ids=["inf-objective", "inf-duration", "inf-tolerance", "string-objective", "yes-as-a-count"])
def test_an_objective_or_tolerance_that_lets_every_figure_pass_is_refused(tmp_path, text, says):
    out = gate(tmp_path, write_run(tmp_path / "run", GOOD, MEASURED), policy=text)
    assert out.returncode == 2 and says in out.stderr and "Traceback" not in out.stderr, out.stdout + out.stderr


def test_a_known_failure_never_hides_lost_writes(tmp_path):
    import datetime

    cases = {**GOOD, ETCD: ("failed", {})}
    results = write_run(tmp_path / "run", cases, measured(**{f"{ETCD}|lost_writes": 12}))
    policy = policy_of(known_failures=[
        {"test": ETCD, "until": datetime.date.today() + datetime.timedelta(days=30), "reason": "ticket 42"}])
    verdict = judged(results, policy)
    assert verdict.decision is Decision.BLOCK
    assert any("lost_writes" in row.measure and row.verdict == "block" for row in verdict.rows)
    assert "lost_writes" in verdict.to_json()


def test_the_gate_writes_no_output_through_a_symbolic_link(tmp_path):
    results = write_run(tmp_path / "run", GOOD, MEASURED)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (results / "gate.json").symlink_to(victim)
    out = gate(tmp_path, results)
    assert out.returncode == 2 and "cannot judge" in out.stderr, out.stdout + out.stderr
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize("spoil", ["gate.json is a directory", "read-only results", "5000 digits", "no such date"])
def test_a_failure_of_the_gate_itself_is_cannot_judge_not_block(tmp_path, spoil):
    results = write_run(tmp_path / "run", GOOD, MEASURED)
    policy = f"required_suites: [etcd, self_healing]\n{NOT_MEASURED}"
    if spoil == "gate.json is a directory":
        (results / "gate.json").mkdir()
    elif spoil == "read-only results":  # a read-only mount: root too cannot write there
        if os.geteuid() != 0:
            pytest.skip("a read-only bind mount needs root")
        view = tmp_path / "read-only"
        view.mkdir()
        subprocess.run(["mount", "--bind", str(results), str(view)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
            out = gate(tmp_path, view)
        finally:
            subprocess.run(["umount", str(view)], check=True)
        assert out.returncode == 2 and "cannot judge" in out.stderr and "Read-only" in out.stderr, \
            out.stdout + out.stderr
        return
    elif spoil == "5000 digits":
        policy += f"baseline_tolerance_pct: {'9' * 5000}\n"
    else:
        policy += "known_failures: [{test: " + ETCD + ", until: 2026-13-45, reason: r}]\n"
    out = gate(tmp_path, results, policy=policy)
    assert out.returncode == 2 and "cannot judge" in out.stderr and "Traceback" not in out.stderr, \
        out.stdout + out.stderr


def test_a_control_character_in_a_subject_keeps_gate_junit_well_formed(tmp_path):
    records = {**MEASURED, HEALING: [{"name": "time_to_healthy_s", "subject": "etcd\x07\x1b[31m", "value": 1.0},
                                     *MEASURED[HEALING][1:]]}
    results = write_run(tmp_path / "run", GOOD, records)
    gate(tmp_path, results)
    ElementTree.parse(results / "gate-junit.xml")  # raises on malformed XML


def test_the_second_run_is_compared_with_the_first_promoted_one_and_says_so(tmp_path):
    store = tmp_path / "promoted"
    first = gate(tmp_path, write_run(tmp_path / "first", GOOD, MEASURED), "--store", str(store))
    assert first.returncode == 0 and "no earlier promoted run to compare with" in first.stdout, first.stdout
    assert json.loads(next(store.glob("*/promoted.json")).read_text())["run_id"] == "0123456789ab"
    second_dir = write_run(tmp_path / "second", GOOD, measured(**{f"{HEALING}|time_to_healthy_s": 9.0}))
    (second_dir / "run.json").write_text((second_dir / "run.json").read_text().replace("0123456789ab", "second-run"))
    for history in second_dir.glob("*.jsonl"):
        history.write_text(history.read_text().replace("0123456789ab", "second-run"))
    second = gate(tmp_path, second_dir, "--store", str(store))
    assert second.returncode == 1 and "compared with 1 promoted run(s)" in second.stdout, second.stdout
    assert "regressed" in second.stdout and json.loads((second_dir / "gate.json").read_text())["baseline"]
