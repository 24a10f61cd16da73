"""The member-by-member etcd upgrade (harness/lifecycle/etcd_upgrade.py, harness/faults/etcd_upgrade.py) on the fake
target, and etcd's upgrade policy (harness/lifecycle/etcd_policy.py): the leader last, the rollback through etcd's
downgrade procedure once the cluster's version moved up, and refusals before anything acts."""

import pytest

from harness.faults import EtcdUpgrade
from harness.faults import etcd_upgrade
from harness.faults.base import Nemesis
from harness.faults.sweep import heal_cluster
from harness.faults.etcd_upgrade import cluster_version, member_versions
from harness.history import History
from harness.lifecycle.etcd_policy import EtcdReleaseViolation, check_etcd_step
from harness.lifecycle.etcd_upgrade import SnapshotCheck, roll_back_etcd_upgrade, rolling_etcd_upgrade, \
    snapshot_restorable
from harness.toolchain.versions import ETCD_VERSION, Version

OLD, NEW = Version.parse(ETCD_VERSION), Version.parse("v3.6.16")
SNAPSHOT = SnapshotCheck(path=None, revision=0, keys=0)  # type: ignore[arg-type]


def etcd_calls(fake) -> list[list]:
    return [call for call in fake.calls() if call[0] in ("override", "restore") and call[1].startswith("etcd@")
            or call[:2] == ["etcd", "/v3/maintenance/downgrade"]]


@pytest.mark.parametrize("versions, host, to, agreed, rule", [
    ({"c1": OLD, "c2": OLD}, "c1", Version.parse("v3.7.3"), Version(3, 5), "etcd-one-minor-at-a-time"),
    ({"c1": OLD, "c2": NEW}, "c2", Version.parse("v3.7.3"), Version(3, 5), "etcd-one-minor-at-a-time"),
    ({"c1": NEW, "c2": NEW}, "c1", OLD, Version(3, 6), "etcd-not-older-than-cluster-version"),
    ({"c1": OLD}, "c1", Version.parse("v4.0.0"), Version(3, 5), "etcd-same-major"),
])
def test_a_step_etcds_policy_does_not_support_is_refused_with_the_rule_named(versions, host, to, agreed, rule):
    with pytest.raises(EtcdReleaseViolation) as refused:
        check_etcd_step(versions, host, to, agreed)
    assert refused.value.rule.name == rule and rule in str(refused.value)


@pytest.mark.parametrize("versions, host, to, agreed", [
    ({"c1": OLD, "c2": OLD}, "c1", NEW, Version(3, 5)),  # the next minor
    ({"c1": NEW, "c2": OLD}, "c1", OLD, Version(3, 5)),  # back, while the cluster's version has not moved up
    ({"c1": NEW, "c2": NEW}, "c1", OLD, Version(3, 5)),  # back, once the downgrade is enabled
    ({"c1": OLD}, "c1", Version.parse("v3.5.22"), None),  # a patch
])
def test_the_next_minor_a_patch_and_a_step_back_below_the_clusters_version_are_allowed(versions, host, to, agreed):
    check_etcd_step(versions, host, to, agreed)


def test_members_are_upgraded_leader_last_and_rolled_back_through_the_downgrade_procedure(fake):
    nemesis = Nemesis(fake, History())
    assert fake.etcd.leader() == "c1"
    result = rolling_etcd_upgrade(fake, nemesis, NEW, SNAPSHOT, ready_timeout_s=2.0)
    assert result.completed and result.rollout.changed == ["etcd@c2", "etcd@c3", "etcd@c1"]
    assert set(member_versions(fake).values()) == {NEW} and cluster_version(fake) == Version(3, 6)
    assert roll_back_etcd_upgrade(fake, nemesis, result, ready_timeout_s=2.0)
    calls = etcd_calls(fake)[3:]
    # the cluster's version had moved up: the downgrade is validated and enabled before the first binary goes back
    assert calls[:2] == [["etcd", "/v3/maintenance/downgrade", "VALIDATE"], ["etcd", "/v3/maintenance/downgrade",
                                                                           "ENABLE"]]
    assert [call[1] for call in calls[2:]] == ["etcd@c1", "etcd@c3", "etcd@c2"]
    assert set(member_versions(fake).values()) == {OLD} and cluster_version(fake) == Version(3, 5)
    assert nemesis.active == [] and fake.health.problems() == []


def test_a_half_done_upgrade_is_healed_without_a_downgrade(fake):
    nemesis = Nemesis(fake, History())
    rolling_etcd_upgrade(fake, nemesis, NEW, SNAPSHOT, hosts=["c2"], ready_timeout_s=2.0)
    assert cluster_version(fake) == Version(3, 5)  # one member of three on the new minor: the cluster stays
    nemesis.heal_all()
    assert not any(call[0] == "etcd" and "downgrade" in call[1] for call in fake.calls())
    assert set(member_versions(fake).values()) == {OLD}


def test_a_plan_that_skips_a_minor_injects_nothing(fake):
    nemesis = Nemesis(fake, History())
    with pytest.raises(EtcdReleaseViolation, match="etcd-one-minor-at-a-time"):
        rolling_etcd_upgrade(fake, nemesis, Version.parse("v3.7.3"), SNAPSHOT, ready_timeout_s=2.0)
    assert etcd_calls(fake) == [] and nemesis.active == []


def test_the_fault_refuses_a_component_that_is_not_an_etcd_member(fake):
    with pytest.raises(Exception, match="not an etcd member"):
        EtcdUpgrade(component="kube-apiserver@c1", to=str(NEW)).plan(fake)


def test_the_snapshot_is_restored_into_a_scratch_directory_that_is_removed_afterwards(fake, tmp_path):
    check = snapshot_restorable(fake, tmp_path / "before.db")
    assert check.path.read_bytes() == b"fake etcd snapshot"
    commands = [call[2] for call in fake.calls() if call[0] == "exec"]
    restore = next(argv for argv in commands if argv[1:3] == ["snapshot", "restore"])
    scratch = next(arg.split("=", 1)[1] for arg in restore if arg.startswith("--data-dir="))
    assert ["rm", "-rf", "--", scratch] in commands and scratch.startswith(str(tmp_path))


def test_a_killed_runs_upgrade_is_healed_through_the_downgrade(fake):
    nemesis = Nemesis(fake, History())
    rolling_etcd_upgrade(fake, nemesis, NEW, SNAPSHOT, ready_timeout_s=2.0)  # journaled; the harness then dies
    report = heal_cluster(type(fake)(fake.run_dir))  # `quorum heal`: a fresh target, the journal's records
    assert not report.failed and not report.kept, report
    assert set(member_versions(fake).values()) == {OLD} and cluster_version(fake) == Version(3, 5)
    assert fake.health.problems() == []


def test_quorum_heal_leaves_members_on_the_new_release_when_the_downgrade_cannot_be_done(fake, monkeypatch):
    """etcd 3.5 refuses to start on a cluster whose version is 3.6: forced back, every member would crash-loop."""
    monkeypatch.setattr(etcd_upgrade, "DOWNGRADE_HEALTHY_S", 0.3)
    nemesis = Nemesis(fake, History())
    rolling_etcd_upgrade(fake, nemesis, NEW, SNAPSHOT, ready_timeout_s=2.0)
    fake.hold("etcd", "c3")  # a member down for good: the downgrade cannot be validated
    report = heal_cluster(type(fake)(fake.run_dir))
    assert report.kept == {"etcd@c1", "etcd@c2", "etcd@c3"}
    assert all("is left as it is: its old release refuses a cluster at version 3.6" in failure
               for failure in report.failed) and len(report.failed) == 3
    assert member_versions(fake) == {"c1": NEW, "c2": NEW}  # not forced onto a binary that would refuse the data
    assert not any(call[:2] == ["etcd", "/v3/maintenance/downgrade"] for call in fake.calls())
