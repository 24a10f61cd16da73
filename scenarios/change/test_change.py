"""A team's own change (seed 003's update and rollback; docs/lifecycle.md, "Your own procedure"): their upgrade,
rollout or scale, run as they wrote it (`quorum change`, or `pytest scenarios/change --change PROCEDURE`), while
clients read through the load balancer, write through the API and to etcd, the leases are watched and the control
plane's releases are observed every few seconds. Quorum does not know how the change works: it judges what clients,
leases and the control plane saw while it ran."""

import time

import pytest

from harness.change.beside import FaultsDuringChange
from harness.change.runner import change_env, run_in_host, run_steps
from harness.checkers import availability, durability
from harness.checkers.verdict import Verdict
from harness.checkers.change import (VERSIONS, change_completed, ends_on_releases, faults_happened, leader_continuity,
                                     skew_held)
from harness.history import History
from harness.load.generator import LoadGenerator, spec_for
from harness.objectives.catalog import configured_bound
from harness.objectives.measurement import Measurement, from_verdict
from harness.scenario import explain_all, judge
from harness.scenario.rollout import settle
from harness.target.health import LEASES
from harness.thresholds import AVAILABILITY_PCT

CONTINUITY = "the lease failover the configuration promises: a restarted leader's lease taken over within it"


@pytest.fixture
def change(quorum_settings, cluster):
    """The procedure given with --change, its hosts checked against the cluster before anything runs."""
    procedure = quorum_settings.change
    if procedure is None:
        pytest.skip("no change was given: run your procedure with `quorum change` or --change PROCEDURE")
    unknown = sorted(procedure.hosts() - set(cluster.hosts()))
    if unknown:
        pytest.fail(f"the procedure runs on {', '.join(unknown)}, which {cluster.name} does not have (its hosts: "
                    f"{', '.join(cluster.hosts())}); fix: name hosts of the cluster in the procedure", pytrace=False)
    return procedure


@pytest.fixture
def steady_load(change, cluster, history, profile, tmp_path):
    """When the change asks for it, the profile's API load (its users and rate) for at most the change's budget:
    the test stops it when the change and its rollback have ended, this fixture whatever happened."""
    if not change.load:
        yield None
        return
    spec = spec_for(cluster, users=profile.load_users, rate_per_s=profile.load_rate_per_s, duration_s=change.budget_s)
    with LoadGenerator(cluster, history, spec, tmp_path / "load") as load:
        yield load


def current_releases(history) -> dict[str, str]:
    """Each component's release at the last observation, as a rollback must leave them again."""
    seen = history.events_of(VERSIONS)
    return dict(seen[-1].get("components", {})) if seen else {}


@pytest.mark.destructive
@pytest.mark.measures("availability_pct", "lost_writes", "lease_failover_s")
def test_the_change_keeps_the_api_the_writes_and_the_leaders_and_ends_on_its_releases(
        cluster, change, nemesis, rolling_change_prober, etcd_writer, kube_writer, leases, release_watcher, history,
        steady_load, quorum_settings, objectives):
    """Run the change's steps in order, each within its budget and all within the change's. Judged, each against
    its objective: reads through the LB stay >= 99.5 % available and no acknowledged write (API or etcd) is lost;
    neither controller lease goes longer without a renewal than a leader failover; at every observation the
    control plane is within the version skew policy; the change ends with every component on the releases it
    expects, and every step exited 0 in time. When one of these fails as the change ends (availability and the
    leaders as far as they were seen by then) and the change has a rollback, the rollback runs and is judged the
    same way: its steps, the releases from before the change, and clients and leaders over both. Beside it, when
    the change asks: the profile's steady API load, and faults at their times (each must have happened while the
    change ran, or it was not judged under them)."""
    started = time.monotonic()
    release_watcher.observe()  # what the control plane runs as the change begins (the rollback's target)
    before = current_releases(history)
    env, in_host, logs = change_env(cluster), run_in_host(cluster.run), quorum_settings.change_logs
    faults = FaultsDuringChange(nemesis, leases, history, list(change.faults)).start()
    try:
        run_steps(list(change.steps), phase="change", budget_s=change.budget_s, history=history, log_dir=logs,
                  in_host=in_host, env=env)
    finally:
        faults.stop()
    release_watcher.observe()  # the releases the change left, now rather than up to a period later
    during = [faults_happened(history, planned=["kill"] * len(change.faults), since=started,
                              until=time.monotonic())] if change.faults else []
    done = [change_completed(history), skew_held(history, since=started),
            ends_on_releases(history, expected=change.expect)]
    bound = configured_bound("lease_failover_s", cluster)
    # what clients and controllers saw so far decides the rollback too; the final verdicts are judged below
    seen = [availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT),
            *continuity(history, started, time.monotonic(), bound)]
    rolled_back = []
    if not all([*done, *seen]) and change.rollback:
        run_steps(list(change.rollback), phase="rollback", budget_s=change.budget_s, history=history, log_dir=logs,
                  in_host=in_host, env=env)
        release_watcher.observe()
        rolled_back = [change_completed(history, phase="rollback"),
                       ends_on_releases(history, expected=_releases(before))]
    ended = time.monotonic()
    achieved = steady_load.stop() if steady_load is not None else None
    settle(cluster, rolling_change_prober, objectives)
    etcd_writer.stop()
    kube_writer.stop()
    leaders = continuity(history, started, ended, bound)
    api, writes = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT), durability(history, system="kube")
    longest = [v.figures.get("longest_s") for v in leaders]
    verdicts = judge(
        history, *done, *during, *rolled_back, api, durability(history, system="etcd"), writes, *leaders,
        figures={"steps": done[0].figures.get("steps"), "took_s": round(ended - started, 3),
                 "rolled_back": bool(rolled_back), "load_rps": None if achieved is None else round(achieved.rps, 1)},
        measures=[from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lost_writes", writes, "lost"),
                  Measurement("lease_failover_s", None if None in longest else max(longest), None, bound,
                              CONTINUITY)])
    assert all(verdicts), explain_all(verdicts)


def continuity(history: History, since: float, until: float, bound: float) -> list[Verdict]:
    """leader-continuity for each controller lease over [since, until]."""
    return [leader_continuity(history, subject=lease, since=since, until=until, max_s=bound) for lease in LEASES]


def _releases(components: dict[str, str]) -> dict[str, str]:
    """A rollback's `expect`: every component back on the release it ran before the change, by component name
    (a component whose hosts ran different releases before is left to the skew check)."""
    by_name: dict[str, set[str]] = {}
    for cid, release in components.items():
        by_name.setdefault(cid.partition("@")[0], set()).add(release)
    return {name: releases.pop() for name, releases in by_name.items() if len(releases) == 1}
