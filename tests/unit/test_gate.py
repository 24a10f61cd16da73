import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.gate import Decision, Policy, PolicyError, evaluate
from harness.gate.evaluate import figures_of
from harness.objectives.catalog import MEASURES
from harness.objectives.declared import declared_by
from harness.report.results import ResultsError, history_slug, load_results, load_run

ROOT = Path(__file__).resolve().parents[2]


RUN_ID = "0123456789ab"


def write_run(directory: Path, cases: dict[str, tuple[str, dict]], measures: dict[str, list[dict]] | None = None,
              *, planned: dict[str, list[str]] | None = None, skips: dict[str, dict] | None = None,
              evidence: bool = True) -> Path:
    """A run's results as Quorum writes them. cases: nodeid -> (outcome, {checker: (status, figures)}); measures:
    nodeid -> measure records; planned: suite -> node ids (default: the cases'); skips: nodeid -> a skip record
    (harness/scenario/skips.py); evidence: write run.json and each scenario's result record (False: a bare junit)."""
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
            for record in (measures or {}).get(nodeid, []):
                history.write(json.dumps({"kind": "event", "t": 1.0, "type": "measure", **record}) + "\n")
            if evidence:
                result = {"kind": "result", "run_id": RUN_ID, "nodeid": nodeid, "outcome": outcome}
                if outcome == "skipped":
                    result["skip"] = (skips or {}).get(nodeid, {"kind": "other", "lacking": []})
                history.write(json.dumps(result) + "\n")
    (directory / "junit.xml").write_text(f'<testsuites><testsuite>{"".join(rows)}</testsuite></testsuites>')
    if evidence:
        if planned is None:
            planned = {}
            for nodeid in cases:
                planned.setdefault(nodeid.split("/")[1], []).append(nodeid)
        files = {suite: sorted({n.split("::")[0] for n in ids}) for suite, ids in planned.items()}
        declared = {nodeid: declared_by(nodeid) for ids in planned.values() for nodeid in ids if declared_by(nodeid)}
        (directory / "run.json").write_text(json.dumps({
            "run_id": RUN_ID, "backend": "process", "profile": "ci", "planned": planned, "files": files,
            "collected_files": sorted({f for fs in files.values() for f in fs}), "measures": declared}))
    return directory


def judged(directory: Path, policy=None, **kwargs):
    """The gate's decision on a results directory, as `quorum gate` reaches it."""
    return evaluate(policy or POLICY, load_results(directory), load_run(directory), **kwargs)


# the objectives the crafted runs below measure; a policy says the others are not measured here
MEASURED_HERE = {"time_to_healthy_s", "availability_pct", "lost_writes", "etcd_leader_change_s"}


def policy_of(**fields) -> Policy:
    """A policy requiring etcd and self_healing that says which objectives these crafted runs do not measure."""
    return Policy(**{"required_suites": ["etcd", "self_healing"],
                     "not_measured": sorted(set(MEASURES) - MEASURED_HERE), **fields})


POLICY = policy_of()
ETCD = "scenarios/etcd/test_etcd_quorum.py::test_a_partitioned_leader_is_replaced_and_its_side_accepts_no_writes"
HEALING = "scenarios/self_healing/test_self_healing.py::test_a_killed_component_comes_back[etcd]"
GOOD = {
    ETCD: ("passed", {"durability": ("pass", {"lost": 0})}),
    HEALING: ("passed", {"availability": ("pass", {"availability_pct": 100.0, "longest_outage_s": 0.0})}),
}
MEASURED = {
    ETCD: [{"name": "etcd_leader_change_s", "value": 1.4, "bound": 3.5}, {"name": "lost_writes", "value": 0}],
    HEALING: [{"name": "time_to_healthy_s", "subject": "etcd", "value": 1.6, "bound": 16.0},
              {"name": "availability_pct", "value": 100.0}, {"name": "lost_writes", "value": 0},
              {"name": "reconcile_s", "value": 3.1}],
}


def measured(**changes) -> dict:
    """MEASURED with some figures changed: {"<nodeid>|<name>": value}."""
    copy = {nodeid: [dict(m) for m in records] for nodeid, records in MEASURED.items()}
    for key, value in changes.items():
        nodeid, name = key.split("|")
        for record in copy[nodeid]:
            if record["name"] == name:
                record["value"] = value
    return copy


def test_a_clean_run_is_promoted(tmp_path):
    result = judged(write_run(tmp_path, GOOD, MEASURED))
    assert result.decision is Decision.PROMOTE and {r.verdict for r in result.rows if r.suite != "objectives"} == {"ok"}
    row = next(r for r in result.rows if r.measure == "time_to_healthy_s[etcd]")
    assert (row.figure, row.objective, row.bound) == ("1.6", "36", "16")  # figure, objective, configuration


def test_a_failed_required_scenario_blocks(tmp_path):
    cases = dict(GOOD)
    cases[ETCD] = ("failed", {"durability": ("fail", {"lost": 3})})
    result = judged(write_run(tmp_path, cases, measured(**{f"{ETCD}|lost_writes": 3})))
    assert result.decision is Decision.BLOCK
    assert any("lost_writes: 3, the objective is at most 0" in reason for reason in result.reasons)


def test_a_figure_that_misses_its_objective_blocks_though_its_configuration_allows_it(tmp_path):
    slow = measured(**{f"{HEALING}|time_to_healthy_s": 95.0})
    slow[HEALING][0]["bound"] = 110.0  # a 90 s restart back-off: consistent with itself, too slow for the user
    result = judged(write_run(tmp_path, GOOD, slow))
    assert result.decision is Decision.BLOCK
    assert "time_to_healthy_s[etcd]: 95.00 s, the objective is at most 36.00 s; its configuration promises " \
           "110.00 s: misses the objective" in result.reasons[0]


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_a_figure_that_is_not_a_number_cannot_be_judged(tmp_path, value):
    result = judged(write_run(tmp_path, GOOD, measured(**{f"{HEALING}|availability_pct": value})))
    assert result.decision is Decision.UNJUDGED


def test_a_scenario_that_ran_without_recording_its_figures_cannot_be_judged(tmp_path):
    result = judged(write_run(tmp_path, GOOD))  # passed, and no measure in the Histories
    assert result.decision is Decision.UNJUDGED
    assert any("recorded no etcd_leader_change_s" in reason for reason in result.reasons)


def test_a_missing_required_suite_or_an_unknown_verdict_cannot_be_judged(tmp_path):
    only_etcd = {k: v for k, v in GOOD.items() if "etcd_quorum" in k}
    assert judged(write_run(tmp_path / "a", only_etcd, MEASURED)).decision is Decision.UNJUDGED
    cases = dict(GOOD)
    cases[ETCD] = ("passed", {"durability": ("unknown", {})})
    assert judged(write_run(tmp_path / "b", cases, MEASURED)).decision is Decision.UNJUDGED


@pytest.mark.parametrize("line", ['[1, 2]', '{"type": "measure", "name": "lease_failover_s", "value": "slow"}',
                                  '{"type": "verdict", "status": "pass"}', "not json"], ids=["list", "string",
                                                                                             "no-checker", "text"])
def test_a_malformed_history_line_cannot_be_judged_and_never_crashes(tmp_path, line):
    directory = write_run(tmp_path, GOOD, MEASURED)
    with (directory / f"{history_slug(ETCD)}.jsonl").open("a") as history:
        history.write(line + "\n")
    result = judged(directory)
    assert result.decision is Decision.UNJUDGED


def test_a_known_failure_is_allowed_until_it_expires(tmp_path):
    cases = dict(GOOD)
    cases[ETCD] = ("failed", {})
    results = write_run(tmp_path, cases, MEASURED)
    policy = policy_of(known_failures=[
        {"test": ETCD, "until": datetime.date.today() + datetime.timedelta(days=30), "reason": "ticket 42"}])
    assert judged(results, policy).decision is Decision.PROMOTE
    late = judged(results, policy, today=datetime.date.today() + datetime.timedelta(days=31))
    assert late.decision is Decision.BLOCK and "expired" in late.reasons[0]


@pytest.mark.parametrize("entry, says", [
    ({"test": "scenarios/etcd/", "until": "2026-12-01", "reason": "r"}, "is not one scenario's node id"),
    ({"test": ETCD, "until": "2099-01-01", "reason": "r"}, "days away"),
], ids=["prefix", "far"])
def test_a_known_failure_names_one_test_and_a_date_at_most_90_days_away(entry, says):
    with pytest.raises(ValueError, match=says):
        Policy(required_suites=["etcd"], known_failures=[entry])


def test_a_regression_against_the_baseline_blocks(tmp_path):
    before = figures_of(load_results(write_run(tmp_path / "before", GOOD, MEASURED)))
    worse = measured(**{f"{HEALING}|time_to_healthy_s": 6.0})
    result = judged(write_run(tmp_path / "after", GOOD, worse), earlier=before)
    assert result.decision is Decision.BLOCK and "regressed" in result.reasons[0]
    same = judged(write_run(tmp_path / "same", GOOD, MEASURED), earlier=before)
    assert same.decision is Decision.PROMOTE


def test_invalid_policies_say_what_is_wrong(tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text("required_suites: []\nthreshold: {}\n")
    with pytest.raises(PolicyError) as info:
        Policy.load(path)
    assert "required_suites" in info.value.problem and "threshold: unknown key" in info.value.problem
    path.write_bytes(b"required_suites: [etcd]\n# caf\xe9\n")
    with pytest.raises(PolicyError, match="is not UTF-8"):
        Policy.load(path)
    with pytest.raises(PolicyError, match="does not exist"):
        Policy.load(tmp_path / "nope.yaml")


def test_missing_results_cannot_be_judged(tmp_path):
    with pytest.raises(ResultsError, match="no junit.xml"):
        load_results(tmp_path)


def test_the_shipped_policy_is_valid():
    assert "etcd" in Policy.load(ROOT / "gate.yaml").required_suites


# what a policy says of the kind of target it is for; the objectives and the rest are the same in every policy
PER_TARGET = {"required_suites", "may_lack", "not_measured", "read_only_when_not_disposable"}


def test_the_target_policy_needs_every_suite_and_lets_a_target_lack_only_what_the_remote_backend_lacks():
    """gate-target.yaml: gate.yaml's objectives; every suite but the self-hosted checkpointer's and a team's change
    (run only when one is given: `quorum change` judges it whole) is required; a suite
    may lack a capability only when one of its scenarios needs it and some inventory cannot offer it, so that no
    scenario is left unjudged on every target and nothing a target has is excused."""
    from harness.backends.remote.target import RemoteTarget
    from harness.target.capabilities import Capability
    from tests.tiers import ledger_from_a_child

    main, target = Policy.load(ROOT / "gate.yaml"), Policy.load(ROOT / "gate-target.yaml")
    assert target.model_dump(exclude=PER_TARGET) == main.model_dump(exclude=PER_TARGET)
    scenarios = ledger_from_a_child().scenarios
    suites = {scenario.id.split("/")[1] for scenario in scenarios}
    assert set(target.required_suites) == suites - {"checkpointer", "change"}
    capabilities = {c.value for c in Capability}
    # an inventory whose kube-apiserver is no static pod lacks static-pods, and one that asks for no hollow nodes
    # hollow-nodes (RemoteBackend.topology_lacks)
    lacked = capabilities - {c.value for c in RemoteTarget.capabilities()} | {Capability.STATIC_PODS.value,
                                                                               Capability.HOLLOW_NODES.value}
    for suite in target.required_suites:
        needed = {c for s in scenarios if s.id.split("/")[1] == suite for c in s.requires} & lacked
        excused = set(target.may_lack.get(suite, [])) & capabilities
        assert needed <= excused, f"{suite}: every target would leave unjudged what needs {needed - excused}"
        assert excused <= needed, f"{suite}: excuses {excused - needed}, which none of its scenarios needs of a target"
    assert target.read_only_when_not_disposable  # someone else's cluster that is not disposable: read only, said


def test_the_kind_policy_needs_what_gate_yaml_needs_of_the_suites_kind_can_run():
    main, kind = Policy.load(ROOT / "gate.yaml"), Policy.load(ROOT / "gate-kind.yaml")
    assert kind.model_dump(exclude=PER_TARGET) == main.model_dump(exclude=PER_TARGET)
    suites = {path.name for path in (ROOT / "scenarios").iterdir() if list(path.glob("test_*.py"))}
    assert set(kind.required_suites) <= suites
    # left out: the suites whose every scenario needs hollow nodes or another release's binaries on the hosts;
    # static_pods is kind's
    assert set(main.required_suites) - set(kind.required_suites) == {"lifecycle", "load"}
    assert set(kind.required_suites) - set(main.required_suites) == {"static_pods"}


def test_the_kind_and_target_policies_excuse_every_objective_their_targets_cannot_measure():
    """An objective no scenario can measure on a kind cluster (none that kind claims declares it), or on every
    inventory (each scenario declaring it needs what some inventory lacks: hollow nodes, a static-pod apiserver), is
    in that policy's not_measured: else the gate would call it unmeasured on every such run, and block."""
    from harness.objectives.declared import declared_measures
    from harness.target.capabilities import Capability
    from tests.tiers import ledger_from_a_child

    scenarios = {scenario.id.split("[")[0]: scenario for scenario in ledger_from_a_child().scenarios}
    optional = {Capability.HOLLOW_NODES.value, Capability.STATIC_PODS.value}  # RemoteBackend.topology_lacks
    for policy_file, measurable in (
            ("gate-kind.yaml", lambda scenario: "kind" in scenario.claimed_by),
            ("gate-target.yaml", lambda scenario: "remote" in scenario.claimed_by and not optional & set(
                scenario.requires))):
        policy = Policy.load(ROOT / policy_file)
        measured = {name for nodeid, names in declared_measures().items()
                    if nodeid in scenarios and measurable(scenarios[nodeid]) for name in names}
        assert set(MEASURES) - measured <= set(policy.not_measured), \
            f"{policy_file}: no scenario measures {sorted(set(MEASURES) - measured - set(policy.not_measured))} there"


@pytest.mark.parametrize("cases, code", [(GOOD, 0), ({}, 2)], ids=["promote", "no-results"])
def test_cli_exit_codes_and_outputs(tmp_path, cases, code):
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"required_suites: [etcd, self_healing]\nnot_measured: {sorted(set(MEASURES) - MEASURED_HERE)}\n")
    results = write_run(tmp_path / "run", cases, MEASURED) if cases else tmp_path / "empty"
    results.mkdir(exist_ok=True)
    out = subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(policy), "--results", str(results)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == code, out.stdout + out.stderr
    if code == 0:
        assert json.loads((results / "gate.json").read_text())["decision"] == "promote"
        assert "<testsuite" in (results / "gate-junit.xml").read_text()


def test_without_results_the_newest_run_is_judged_even_when_it_died_before_its_junit(tmp_path):
    """Never the previous run instead: the newest died mid-way, so there is nothing to promote."""
    import os
    import time

    older = write_run(tmp_path / "reports" / "histories" / "20261125-100000", GOOD, MEASURED)
    newest = tmp_path / "reports" / "histories" / "20261125-110000"
    newest.mkdir()
    (newest / "a-scenario.jsonl").write_text("")
    os.utime(older, (time.time() - 60, time.time() - 60))
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"required_suites: [etcd, self_healing]\nnot_measured: {sorted(set(MEASURES) - MEASURED_HERE)}\n")
    out = subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(policy)], cwd=tmp_path,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no junit.xml in reports/histories/20261125-110000" in out.stderr


def test_the_gate_names_the_cluster_or_target_the_run_judged(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"required_suites: [etcd, self_healing]\nnot_measured: {sorted(set(MEASURES) - MEASURED_HERE)}\n")
    results = write_run(tmp_path / "run", GOOD, MEASURED)
    (results / "cluster.json").write_text(json.dumps({"target": "staging", "api_endpoint": "https://10.0.0.10:6443",
                                                      "kubernetes": "v1.34.4", "etcd": "3.6.5"}))
    out = subprocess.run([sys.executable, "-m", "harness.cli", "gate", "--policy", str(policy), "--results", str(results)],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "300"})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "on staging (https://10.0.0.10:6443, Kubernetes v1.34.4, etcd 3.6.5)" in out.stdout, out.stdout
    assert json.loads((results / "gate.json").read_text())["cluster"]["target"] == "staging"
