"""The rolling upgrade procedure (harness/lifecycle/upgrade.py, harness/scenario/rollout.py) on the fake target: the
policy's order, one component at a time or the cluster's `at_once`, the lease gate, the rollback in reverse, an
aborted step healed, and a plan the skew policy refuses before anything acts."""

import threading

import pytest

from harness.faults import ModifyFlags
from harness.faults.base import Nemesis
from harness.faults.upgrade import control_plane_versions
from harness.history import History
from harness.lifecycle.skew import SkewViolation
from harness.scenario.rollout import rolling_change
from harness.lifecycle.upgrade import ReleaseGate, roll_back_upgrade, rolling_upgrade, step_timeout_s
from harness.objectives.bounds import leader_failover_bound_s
from harness.thresholds import STARTUP_ALLOWANCE_S
from harness.topology import Component
from harness.toolchain.versions import Version

N1 = Version.parse("v1.35.4")
ORDER = [f"{c}@{h}" for c in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
         for h in ("c1", "c2", "c3")]


def overrides(fake) -> list[str]:
    return [call[1] for call in fake.calls() if call[0] == "override"]


def test_every_component_is_upgraded_in_the_policys_order_and_rolled_back_in_reverse(fake):
    nemesis = Nemesis(fake, History())
    result = rolling_upgrade(fake, nemesis, N1, ready_timeout_s=2.0)
    assert result.completed and result.rollout.changed == ORDER == overrides(fake)
    assert set(control_plane_versions(fake).values()) == {N1}
    assert set(result.rollout.step_s) == set(ORDER)
    assert roll_back_upgrade(fake, nemesis, result, ready_timeout_s=2.0)
    restores = [call[1] for call in fake.calls() if call[0] == "restore"]
    assert restores == ORDER[::-1]
    assert set(control_plane_versions(fake).values()) == {Version.parse("v1.34.4")}
    assert nemesis.active == [] and fake.health.problems() == []


def test_the_lease_gate_waits_for_a_successor_of_the_restarted_holder(fake):
    gate = ReleaseGate(lambda component_id: N1)
    gate.before(fake, "kube-controller-manager@c1")  # c1 holds both leases in the model
    old = fake.api.lease_holder("kube-controller-manager").identity
    fake.override_command_line("kube-controller-manager", "c1", ["/fake/releases/v1.35.4/kube-controller-manager"])
    assert fake.api.lease_holder("kube-controller-manager").identity != old
    assert gate(fake, "kube-controller-manager@c1")
    with fake.changing() as model:  # the lease still names the process the step restarted
        model["leases"]["kube-controller-manager"] = old
    assert not gate(fake, "kube-controller-manager@c1")


def test_at_once_injects_a_whole_kind_before_any_readiness_check(fake, monkeypatch):
    seen: list[tuple[str, int]] = []
    real = ReleaseGate.__call__

    def gate(self, cluster, component_id):
        seen.append((component_id, len(overrides(cluster))))
        return real(self, cluster, component_id)

    monkeypatch.setattr(ReleaseGate, "__call__", gate)
    result = rolling_upgrade(fake, Nemesis(fake, History()), N1, ready_timeout_s=2.0, at_once=3)
    assert result.completed
    assert sorted(overrides(fake)[:3]) == ORDER[:3]
    # the first check of an apiserver came after all three were restarted, of a controller-manager after all six
    assert dict(reversed(seen))["kube-apiserver@c1"] == 3 and dict(reversed(seen))["kube-controller-manager@c1"] == 6


def test_a_step_not_ready_in_time_is_healed_and_nothing_further_is_touched(fake, monkeypatch):
    nemesis = Nemesis(fake, History())
    real = ReleaseGate.__call__
    monkeypatch.setattr(ReleaseGate, "__call__",
                        lambda self, cluster, cid: cid != "kube-apiserver@c2" and real(self, cluster, cid))
    result = rolling_upgrade(fake, nemesis, N1, ready_timeout_s=0.5)
    assert result.rollout.failed_on == "kube-apiserver@c2" and result.rollout.changed == ["kube-apiserver@c1"]
    assert overrides(fake) == ["kube-apiserver@c1", "kube-apiserver@c2"]
    assert [call[1] for call in fake.calls() if call[0] == "restore"] == ["kube-apiserver@c2"]
    assert roll_back_upgrade(fake, nemesis, result, ready_timeout_s=2.0)
    assert set(control_plane_versions(fake).values()) == {Version.parse("v1.34.4")}


def test_a_plan_the_skew_policy_refuses_injects_nothing(fake):
    nemesis = Nemesis(fake, History())
    with pytest.raises(SkewViolation, match="controller-not-newer-than-apiserver"):
        rolling_upgrade(fake, nemesis, N1, ready_timeout_s=1.0, steps=["kube-scheduler@c1", "kube-apiserver@c1"])
    assert overrides(fake) == [] and not (fake.run_dir / "faults.jsonl").exists()


def test_a_leader_elected_step_is_given_a_lease_failover_beyond_its_start_up_allowance(fake):
    timeout = step_timeout_s(fake)
    assert timeout("kube-apiserver@c1") == STARTUP_ALLOWANCE_S[Component.APISERVER]
    failover = leader_failover_bound_s(fake.leader_election())
    assert timeout("kube-controller-manager@c2") == STARTUP_ALLOWANCE_S[Component.CONTROLLER_MANAGER] + failover
    assert timeout("kube-scheduler@c3") == STARTUP_ALLOWANCE_S[Component.SCHEDULER] + failover


def test_a_gated_batch_waits_for_a_component_restarting_by_itself_before_it_changes_it(fake):
    """A controller-manager that exited on its own after it was planned (its lease lost while every apiserver
    restarted) is waited for: it is changed only once it runs again, within the step's time."""
    fake.hold("kube-controller-manager", "c2")
    releaser = threading.Timer(0.5, fake.release, ("kube-controller-manager", "c2"))
    releaser.start()
    try:
        result = rolling_change(fake, Nemesis(fake, History()),
                                [ModifyFlags(component="kube-controller-manager@c2", add={"--v": "3"})],
                                ready_timeout_s=5.0)
    finally:
        releaser.cancel()
    assert result.completed, result.failed_on
    calls = [call[:2] for call in fake.calls()]
    assert calls.index(["release", "kube-controller-manager@c2"]) < calls.index(["override",
                                                                                  "kube-controller-manager@c2"])
