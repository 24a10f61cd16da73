"""etcd's minor upgrade under fire (seed 003's update and rollback, for the store itself): a snapshot first, shown
to restore; then one member at a time, the leader last, each healthy on the new release before the next, while
clients write to etcd and through the API and read through the load balancer; then back through etcd's downgrade
procedure (docs/lifecycle.md)."""

import pytest

from harness.checkers import availability, durability
from harness.checkers.lifecycle import on_release, record_releases
from harness.faults.etcd_upgrade import cluster_version, member_versions
from harness.lifecycle.etcd_policy import ETCD_ONE_MINOR, EtcdReleaseViolation
from harness.lifecycle.etcd_upgrade import roll_back_etcd_upgrade, rolling_etcd_upgrade, snapshot_restorable
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge
from harness.scenario.rollout import settle
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import AVAILABILITY_PCT
from harness.toolchain.versions import Version

pytestmark = pytest.mark.requires(Capability.OVERRIDE_ARGS, Capability.RELEASES, Capability.ETCD_DATA)


@pytest.fixture
def etcd_release(quorum_settings, cluster) -> Version:
    """The etcd release to move the members to (--etcd-upgrade-to), newer than what they run."""
    release = Version.parse(quorum_settings.etcd_upgrade_to)
    running = max(member_versions(cluster).values(), default=None)
    if running is not None and release <= running:
        pytest.skip(f"the members run etcd {running} already: give --etcd-upgrade-to a newer release than that")
    return release


def record(cluster, history, when: str) -> None:
    """Each member's binary and the release it answers /version with, and the version the members agreed on."""
    running = {f"etcd@{host}": str(version) for host, version in member_versions(cluster).items()}
    reported = {}
    for host in cluster.hosts(HostRole.ETCD):
        answer = cluster.etcd.versions(cluster.etcd_url(host))
        reported[f"etcd@{host}"] = f"v{answer[0]}" if answer else "no answer"
    record_releases(history, running, reported, when=when)
    history.event("etcd-cluster-version", version=str(cluster_version(cluster)), when=when)


@pytest.mark.destructive
@pytest.mark.measures("availability_pct", "lost_writes")
def test_a_member_by_member_etcd_upgrade_keeps_every_write_then_goes_back_through_the_downgrade(
        cluster, nemesis, rolling_change_prober, etcd_writer, kube_writer, history, etcd_release, objectives):
    """A snapshot is taken and restored into a scratch directory first. Then every member moves to
    --etcd-upgrade-to, one at a time (the cluster's own strategy says how many at once), the leader last, each
    healthy and answering with the new release before the next; then back, newest first, the downgrade enabled
    first since the cluster's version moved up. Reads through the LB stay >= 99.5 % available; no acknowledged write
    (to etcd, or through the API) is lost; every member runs and reports the new release after the upgrade and the
    old one after the rollback."""
    old = str(max(member_versions(cluster).values()))
    snapshot = snapshot_restorable(cluster, cluster.run_dir / "snapshots" / "before-etcd-upgrade.db")
    result = rolling_etcd_upgrade(cluster, nemesis, etcd_release, snapshot, at_once=cluster.upgrade_max_unavailable())
    record(cluster, history, "after-upgrade")
    upgraded_cluster = cluster_version(cluster)
    rolled_back = roll_back_etcd_upgrade(cluster, nemesis, result)
    record(cluster, history, "after-rollback")
    settle(cluster, rolling_change_prober, objectives)
    etcd_writer.stop()
    kube_writer.stop()
    api, writes = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT), durability(history, system="etcd")
    verdicts = judge(
        history, api, writes, durability(history, system="kube"),
        on_release(history, expected=str(etcd_release), when="after-upgrade"),
        on_release(history, expected=old, when="after-rollback"),
        figures={"from": old, "to": str(etcd_release), "steps": result.rollout.changed,
                 "step_s": result.rollout.step_s, "failed_on": result.rollout.failed_on, "rolled_back": rolled_back,
                 "snapshot_revision": snapshot.revision, "snapshot_keys": snapshot.keys,
                 "cluster_version_upgraded": str(upgraded_cluster),
                 "cluster_version_after": str(cluster_version(cluster))},
        measures=[from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lost_writes", writes, "lost")])
    assert result.completed, f"{result.rollout.failed_on} was not healthy on etcd {etcd_release} in time"
    assert snapshot.revision > 0 and snapshot.keys > 0, snapshot
    assert upgraded_cluster == Version(etcd_release.major, etcd_release.minor), upgraded_cluster
    assert all(verdicts), explain_all(verdicts)


def test_an_etcd_upgrade_that_skips_a_minor_is_refused_before_anything_acts(cluster, nemesis, history):
    """Two minors up at once is refused with etcd's rule named; no member is restarted, no fault recorded."""
    current = max(member_versions(cluster).values())
    pids = {host: cluster.pid("etcd", host) for host in cluster.hosts(HostRole.ETCD)}
    with pytest.raises(EtcdReleaseViolation) as refused:
        rolling_etcd_upgrade(cluster, nemesis, Version(3, current.minor + 2, 0),
                             snapshot=None)  # type: ignore[arg-type]
    assert refused.value.rule is ETCD_ONE_MINOR
    assert {host: cluster.pid("etcd", host) for host in pids} == pids, "a refused upgrade restarted a member"
    assert not history.fault_windows(), "a refused upgrade injected a fault"
