"""Release upgrades under fire (seed 003's update, rollback and abort; seed 002's upgrade without bricking): one
component at a time in the order the version skew policy requires, each ready on the new release before the next,
while clients read through the load balancer and write through the API and to etcd."""

import pytest

from harness.checkers import availability, durability
from harness.checkers.lifecycle import lease_handovers, on_release, record_releases
from harness.faults.upgrade import control_plane_versions
from harness.lifecycle.skew import NO_SKIPPED_MINOR, NOT_NEWER, SkewViolation
from harness.lifecycle.upgrade import roll_back_upgrade, rolling_upgrade
from harness.objectives.measurement import Measurement, from_verdict
from harness.scenario import explain_all, judge
from harness.scenario.rollout import settle
from harness.target.capabilities import Capability
from harness.target.health import LEASES
from harness.target.protocol import HostRole
from harness.objectives.catalog import configured_bound
from harness.thresholds import AVAILABILITY_PCT
from harness.toolchain.versions import Version
from harness.scenario.skips import lacks

pytestmark = pytest.mark.requires(Capability.OVERRIDE_ARGS, Capability.RELEASES)
FAILOVER = "lease duration + 2 x jittered retry period + 0.5 s"


@pytest.fixture
def release(quorum_settings, cluster) -> Version:
    """The release to upgrade to (--upgrade-to), newer than what the cluster runs."""
    release = Version.parse(quorum_settings.upgrade_to)
    running = max(control_plane_versions(cluster).values(), default=None)
    if running is not None and release <= running:
        pytest.skip(f"the cluster runs {running} already: give --upgrade-to a newer release than that")
    return release


def record(cluster, history, when: str) -> None:
    running = {cid: str(v) for cid, v in control_plane_versions(cluster).items()}
    reported = {}
    for host in cluster.hosts(HostRole.CONTROLLER):
        try:
            reported[f"kube-apiserver@{host}"] = str(cluster.apiserver(host).get("/version", 5.0).json()["gitVersion"])
        except Exception:  # noqa: BLE001 - the verdict names an apiserver that did not answer
            reported[f"kube-apiserver@{host}"] = "no answer"
    record_releases(history, running, reported, when=when)


@pytest.mark.destructive
@pytest.mark.measures("lease_failover_s", "availability_pct", "lost_writes")
def test_a_rolling_upgrade_keeps_the_api_the_writes_and_the_leases_then_rolls_back(
        cluster, nemesis, rolling_change_prober, etcd_writer, kube_writer, leases, history, release, objectives):
    """Upgrade every apiserver, then every controller-manager, then every scheduler to --upgrade-to, one at a time,
    each ready on the new release before the next (the cluster's own strategy says how many at once); then roll
    back the same way, newest first. Reads through the LB stay >= 99.5 % available throughout; no acknowledged
    write (through the API, or to etcd) is lost; each step that restarts a lease's holder hands the lease over
    within the configured failover bound and the lease_failover_s objective; after the upgrade every component
    runs the new release and every apiserver reports it, after the rollback the old one."""
    old = str(control_plane_versions(cluster)[f"kube-apiserver@{cluster.hosts(HostRole.CONTROLLER)[0]}"])
    result = rolling_upgrade(cluster, nemesis, release, at_once=cluster.upgrade_max_unavailable())
    record(cluster, history, "after-upgrade")
    rolled_back = roll_back_upgrade(cluster, nemesis, result)
    record(cluster, history, "after-rollback")
    settle(cluster, rolling_change_prober, objectives)
    etcd_writer.stop()
    kube_writer.stop()
    bound = configured_bound("lease_failover_s", cluster)
    api, writes = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT), durability(history, system="kube")
    handovers = [lease_handovers(history, subject=lease, fault="upgrade", max_s=bound) for lease in LEASES]
    # the slower lease's handover, over the leases a step took from their holder (a lease whose holder no step
    # restarted hands nothing over); none when one never moved, which its verdict fails
    observed = [h.figures["longest_s"] for h in handovers if h.figures["handovers"]]
    longest = None if not observed or None in observed else max(observed)
    verdicts = judge(
        history, api, durability(history, system="etcd"), writes, *handovers,
        on_release(history, expected=str(release), when="after-upgrade"),
        on_release(history, expected=old, when="after-rollback"),
        figures={"from": old, "to": str(release), "steps": result.rollout.changed, "step_s": result.rollout.step_s,
                 "failed_on": result.rollout.failed_on, "rolled_back": rolled_back,
                 "at_once": cluster.upgrade_max_unavailable()},
        measures=[from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lost_writes", writes, "lost"),
                  *([Measurement("lease_failover_s", longest, None, bound, FAILOVER)] if observed else [])])
    # the verdicts first: an upgrade cut short by an outage (every apiserver restarted at once and starting together
    # on a busy machine) fails on what the outage cost, not only on the step that timed out in it
    assert all(verdicts), explain_all(verdicts)
    assert result.completed, f"{result.rollout.failed_on} was not ready on {release} within its step's time"


@pytest.mark.destructive
@pytest.mark.measures("availability_pct", "lost_writes")
def test_an_upgrade_whose_second_apiserver_does_not_come_back_is_aborted_and_rolled_back(
        cluster, nemesis, rolling_change_prober, kube_writer, history, release, objectives):
    """The second apiserver's new release comes with a bad --etcd-servers (a broken package on one host), so its
    readiness gate fails: that step is rolled back, nothing further is touched, and the first apiserver is rolled
    back too. The whole cluster ends on its old release; reads stay >= 99.5 % available, no write is lost."""
    hosts = cluster.hosts(HostRole.CONTROLLER)
    if len(hosts) < 2:
        lacks("two-apiservers", "one apiserver: there is no second step to fail")
    old = str(control_plane_versions(cluster)[f"kube-apiserver@{hosts[0]}"])
    result = rolling_upgrade(cluster, nemesis, release,
                             flags={f"kube-apiserver@{hosts[1]}": {"--etcd-servers": cluster.unanswered_etcd_url()}})
    rolled_back = roll_back_upgrade(cluster, nemesis, result)
    record(cluster, history, "after-abort")
    settle(cluster, rolling_change_prober, objectives)
    kube_writer.stop()
    api = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT)
    writes = durability(history, system="kube")
    verdicts = judge(history, api, writes, on_release(history, expected=old, when="after-abort"),
                     figures={"failed_on": result.rollout.failed_on, "upgraded_before": result.rollout.changed,
                              "rolled_back": rolled_back},
                     measures=[from_verdict("availability_pct", api, "availability_pct"),
                               from_verdict("lost_writes", writes, "lost")])
    assert result.rollout.failed_on == f"kube-apiserver@{hosts[1]}", result.rollout
    assert result.rollout.changed == [f"kube-apiserver@{hosts[0]}"] and rolled_back
    assert all(verdicts), explain_all(verdicts)


def test_steps_the_skew_policy_does_not_support_are_refused_before_anything_acts(cluster, nemesis, history):
    """A controller-manager upgraded before the apiservers, and an apiserver that skips a minor version, are
    refused with the policy's rule named, before any component is touched (the same processes run after)."""
    versions = control_plane_versions(cluster)
    current = max(versions.values())
    host = cluster.hosts(HostRole.CONTROLLER)[0]
    pids = {cid: cluster.pid(*cid.split("@")) for cid in versions}
    next_minor, skipped = Version(1, current.minor + 1, 0), Version(1, current.minor + 2, 0)
    with pytest.raises(SkewViolation) as newer:
        rolling_upgrade(cluster, nemesis, next_minor,
                        steps=[f"kube-controller-manager@{host}", f"kube-apiserver@{host}"])
    with pytest.raises(SkewViolation) as skipping:
        rolling_upgrade(cluster, nemesis, skipped)
    assert newer.value.rule is NOT_NEWER and skipping.value.rule is NO_SKIPPED_MINOR
    assert {cid: cluster.pid(*cid.split("@")) for cid in versions} == pids, "a refused upgrade restarted something"
    assert not history.fault_windows(), "a refused upgrade injected a fault"
