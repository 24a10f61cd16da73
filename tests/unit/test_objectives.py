"""The objectives: every measure a scenario records has an objective and a source, every objective is measured by
a scenario that exists, and a figure is judged against it the right way round."""

import re
from pathlib import Path

import pytest

from harness.checkers.verdict import Status
from harness.checkers.work import RESUMED_FIGURE
from harness.gate import Policy, PolicyError
from harness.objectives.catalog import MEASURES
from harness.objectives.judge import meets
from harness.objectives.measurement import Measurement
from harness.objectives.policy import Objectives
from tests.collect import collect_only, node_ids
from harness.objectives.declared import declared_measures

ROOT = Path(__file__).resolve().parents[2]


def scenario_ids() -> list[str]:
    out = collect_only("scenarios")
    ids = node_ids(out)
    assert ids, out.stdout[-1500:] + out.stderr[-1500:]
    return ids


def test_every_measure_has_an_objective_and_a_source_and_every_objective_a_measure():
    assert set(MEASURES) == set(Objectives.model_fields)
    assert all(spec.source.strip() for spec in MEASURES.values())
    # one record per measure: the policy's defaults are the records' own
    assert Objectives().model_dump() == {name: spec.default for name, spec in MEASURES.items()}


def test_every_measure_is_declared_by_a_scenario_that_exists_and_records_it():
    ids = {i.split("[")[0] for i in scenario_ids()}
    declared = declared_measures()
    assert declared and set(declared) <= ids, set(declared) - ids
    assert {name for names in declared.values() for name in names} == set(MEASURES)
    code = "\n".join(p.read_text() for p in [*(ROOT / "scenarios").rglob("*.py"), ROOT / "harness/checkers/slo.py"])
    recorded = set(re.findall(r'(?:Measurement|from_verdict)\(\s*"([a-z0-9_]+)"', code))
    # the flag suite's detection: its measure is judged_detection's last argument (scenarios/apiserver_flags)
    recorded |= set(re.findall(r'judged_detection\([^)]*"([a-z0-9_]+)"\)', code))
    # a leader killed while its work is asked for: the measure its monitor's probe names (RESUMED_FIGURE)
    helper = (ROOT / "harness/scenario/work_after_failover.py").read_text()
    if "from_verdict(measure, resumed" in helper and "RESUMED_FIGURE[monitor.resumed_op]" in helper:
        recorded |= set(RESUMED_FIGURE.values())
    assert recorded <= set(MEASURES), recorded - set(MEASURES)
    assert recorded == set(MEASURES), f"measures no scenario records: {sorted(set(MEASURES) - recorded)}"


def test_the_defaults_follow_from_upstream_defaults_and_slos():
    defaults = Objectives()
    assert (defaults.lease_failover_s, defaults.lease_give_up_s) == (24.3, 14.9)  # 15/10/2 s with client-go jitter
    assert (defaults.lb_detection_s, defaults.lb_detection_hung_s) == (14.5, 14.5)  # HAProxy inter 2 s, fall 3
    assert (defaults.etcd_leader_change_s, defaults.etcd_write_stall_s) == (3.5, 5.5)  # election timeout 1000 ms
    assert (defaults.availability_pct, defaults.lost_writes, defaults.nodes_not_ready) == (99.5, 0, 0)
    assert defaults.api_p99_s == {"mutating": 1.0, "get": 1.0, "list_namespace": 5.0, "list_cluster": 30.0}
    # the kubelet's relist 1 s + two crash back-off steps (10 s, 20 s) + the start-up allowance
    assert defaults.time_to_healthy_s == {"etcd": 36.0, "kube-apiserver": 51.0, "kube-controller-manager": 41.0,
                                          "kube-scheduler": 41.0}


@pytest.mark.parametrize("measurement, status", [
    (Measurement("lease_failover_s", 17.1, bound=24.3), Status.PASS),
    (Measurement("lease_failover_s", 61.0, bound=82.5), Status.FAIL),
    (Measurement("lease_failover_s", None), Status.FAIL),
    (Measurement("availability_pct", 99.7), Status.PASS),
    (Measurement("availability_pct", 99.4), Status.FAIL),
    (Measurement("time_to_healthy_s", 95.0, "kube-scheduler", bound=110.0), Status.FAIL),
    (Measurement("lost_writes", 0), Status.PASS),
    (Measurement("lost_writes", 1), Status.FAIL),
], ids=["fast", "slow-but-configured", "never", "available", "unavailable", "slow-restart", "none-lost", "lost"])
def test_a_figure_is_judged_against_its_objective_not_its_configuration(measurement, status):
    verdict = meets(measurement, Objectives())
    assert verdict.status is status, verdict.explain()
    if status is Status.FAIL and measurement.value is not None:
        assert "misses the objective" in verdict.explanation


def test_a_measure_kept_per_subject_needs_a_known_subject():
    with pytest.raises(ValueError, match="kept per"):
        Measurement("time_to_healthy_s", 3.0)
    with pytest.raises(KeyError, match="no measure 'failover.failover_s'"):
        Measurement("failover.failover_s", 3.0)


def test_a_policy_sets_some_objectives_and_keeps_the_other_defaults(tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text("required_suites: [etcd]\nobjectives:\n  time_to_healthy_s: {kube-scheduler: 10}\n"
                    "  etcd_leader_change_s: 2\n")
    objectives = Policy.load(path).objectives
    assert objectives.time_to_healthy_s["kube-scheduler"] == 10 and objectives.time_to_healthy_s["etcd"] == 36.0
    assert objectives.etcd_leader_change_s == 2 and objectives.lease_failover_s == 24.3
    path.write_text("required_suites: [etcd]\nobjectives:\n  time_to_healthy_s: {kube-proxy: 10}\n")
    with pytest.raises(PolicyError, match=r"unknown \['kube-proxy'\]"):
        Policy.load(path)
    path.write_text("required_suites: [etcd]\nthresholds: {availability_pct: 99}\n")
    with pytest.raises(PolicyError, match="`thresholds` is gone"):
        Policy.load(path)


def test_docs_gate_shows_the_table_the_records_make():
    """docs/gate.md's objectives: each measure's default, unit, what it is, its source and the scenarios that
    declare it, as harness/objectives/table.py makes them (`python -m harness.objectives.table` rewrites it)."""
    from harness.objectives.table import PAGE, objectives_table, table_on

    assert table_on(PAGE.read_text()) == objectives_table(), "run: python -m harness.objectives.table"
    assert all(f"| `{name}` |" in objectives_table() for name in MEASURES)
