"""apiserver flag corruption (the Lokomotive upgrade problem, seed 002): a bad flag on one apiserver must
not take the API down, and a rolling change must stop at the first apiserver that does not come back."""

import time

import pytest

from harness.checkers import availability, lb_detection
from harness.checkers.lb import lb_routed_around
from harness.faults import ModifyFlags, Pause
from harness.monitors import ApiProber
from harness.objectives.catalog import configured_bound
from harness.objectives.measurement import Measurement, from_verdict
from harness.scenario.rollout import roll_back, rolling_flag_change
from harness.scenario import allowed_s, explain_all, judge, lb_takes_back_s
from harness.scenario.helpers import every_client_routed_around_from, wait_seen_in_rotation, watching_lb_takes_out
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole, Unsupported
from harness.thresholds import AVAILABILITY_MIN_WINDOW_S, AVAILABILITY_PCT, STARTUP_ALLOWANCE_S
from harness.topology import Component
from harness.wait import until
from harness.scenario.skips import lacks

# A flag changes through the component's keeper (a supervisor's command line, a static pod's manifest, a systemd
# drop-in). The load balancer's detection is timed from outside (harness/monitors/lb_routes.py): when new connections
# stopped reaching the broken apiserver. Where its admin interface is reachable, the time it marked the apiserver DOWN
# is the figure and the outside view a second check: a balancer that retries a refused connection elsewhere hides
# from clients an apiserver it still has in rotation. For the same reason, seen from outside, the steady state in
# which every request must be routed around starts the balancer's detection time after new connections stopped
# reaching the apiserver: the long-lived connections it holds leave only when its checks mark it down
# (every_client_routed_around_from).
pytestmark = pytest.mark.requires(Capability.OVERRIDE_ARGS)


def observe_at_least(prober, seconds: float = AVAILABILITY_MIN_WINDOW_S) -> None:
    """Keep probing until the availability window is long enough to be judged (see thresholds)."""
    time.sleep(max(0.0, prober.started_at + seconds - time.monotonic()))


def bad_flags(cluster) -> dict[str, dict]:
    return {
        "unknown-flag": {"add": {"--no-such-flag": "true"}},
        "wrong-etcd-endpoint": {"replace": {"--etcd-servers": cluster.unanswered_etcd_url()}},
        "missing-certificate": {"replace": {"--tls-cert-file": "/nonexistent/apiserver.crt"}},
    }


@pytest.fixture
def new_connection_prober(cluster, history):
    """Half the requests on a new connection each: they are what the LB's health checks route."""
    prober = ApiProber(cluster, history, workers=2, fresh=1).start()
    yield prober
    prober.stop()


def judged_detection(cluster, history, server: str, max_s: float, measure: str) -> tuple[list, Measurement]:
    """The load balancer's detection of `server`: from outside always (lb_routed_around), and by its own view where
    its admin interface is reachable (lb_detection), which then gives the measure; the configured bound is kept
    apart (None where an inventory does not state the balancer's checks: the objective alone decides)."""
    try:
        bound = configured_bound(measure, cluster)
    except Unsupported:
        bound = None
    routing = lb_routed_around(history, server=server, max_s=max_s)
    if Capability.LB_ADMIN in cluster.capabilities():
        detection = lb_detection(history, server=server, max_s=max_s)
        return [detection, routing], from_verdict(measure, detection, "detection_s", bound=bound)
    return [routing], from_verdict(measure, routing, "routed_around_s", bound=bound)


def changed_ready_within_s(cluster) -> float:
    """How long a changed apiserver has to be ready: its start-up allowance, after its keeper applied the change
    (a kubelet picks a changed manifest up on its own schedule)."""
    return cluster.keeper(Component.APISERVER).override_applied_within_s + STARTUP_ALLOWANCE_S[Component.APISERVER]


STEADY_S = 10.0
# a healthy cluster's apiserver is UP in the LB already (the cluster guard sees to it): this only bounds the wait
UP_WITHIN_S = STARTUP_ALLOWANCE_S[Component.APISERVER]


@pytest.mark.destructive
@pytest.mark.parametrize("corruption", ["unknown-flag", "wrong-etcd-endpoint", "missing-certificate"])
@pytest.mark.measures("lb_detection_s", "availability_pct")
def test_one_apiserver_with_a_bad_flag_is_routed_around(cluster, nemesis, new_connection_prober, lb_routes, history,
                                                         corruption, objectives):
    """Restart one apiserver with a bad flag. From the SIGTERM on it fails /readyz (ANCHORS: at once when shutdown
    starts, then because it never becomes ready); the load balancer takes it out of rotation (seen from outside,
    and where its admin interface is reachable marked DOWN there, watched from before the fault) within its
    worst-case detection time (ANCHORS' fall x inter, plus a check in flight and checks that hang), or the
    lb_detection_s objective where an inventory does not state its checks, and from that moment routes every
    request around it: the API through the LB is >= 99.5 % available in the steady state that follows (the
    whole-window figure, which includes the detection time, is reported). New connections, seen from outside (the
    certificate each handshake meets), stop reaching it or failing within the same time. Heal restores the last good
    command line and the apiserver is ready again within its start-up allowance."""
    if len(cluster.hosts(HostRole.CONTROLLER)) < 2:
        lacks("two-apiservers", "one apiserver: there is nothing to route around it to")
    host = cluster.hosts(HostRole.CONTROLLER)[0]
    detection_max_s = allowed_s("lb_detection_s", cluster, objectives)
    wait_seen_in_rotation(history, host, UP_WITHIN_S)
    with (watching_lb_takes_out(cluster, history, host, timeout_s=detection_max_s + 5.0,
                                up_within_s=UP_WITHIN_S) as taken_out_at,
          nemesis.fault(ModifyFlags(component=f"kube-apiserver@{host}", **bad_flags(cluster)[corruption]))):
        start = every_client_routed_around_from(cluster, taken_out_at(), detection_max_s) or time.monotonic()
        steady = (start, start + STEADY_S)
        time.sleep(max(0.0, steady[1] - time.monotonic()))
        broken_ready = cluster.apiserver(host).ready()
    restored = until(cluster.apiserver(host).ready, STARTUP_ALLOWANCE_S[Component.APISERVER], 0.2).held
    time.sleep(lb_takes_back_s(cluster, objectives) + 1)
    whole = availability(history)
    detection, detected = judged_detection(cluster, history, host, detection_max_s, "lb_detection_s")
    steady_api = availability(history, threshold_pct=AVAILABILITY_PCT, window=steady)
    verdicts = judge(history, *detection, steady_api,
                     figures={"apiserver": host, "corruption": corruption, "ready_with_bad_flag": broken_ready,
                              "ready_after_heal": restored, "availability_whole_window_pct":
                              whole.figures.get("availability_pct")},
                     measures=[detected, from_verdict("availability_pct", steady_api, "availability_pct")])
    assert not broken_ready, f"the apiserver on {host} became ready despite {corruption}"
    assert restored, f"the apiserver on {host} was not ready within the start-up allowance after heal"
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.measures("lb_detection_s", "availability_pct")
def test_a_rolling_bad_change_stops_at_the_first_apiserver_and_rolls_it_back(cluster, nemesis, rolling_change_prober,
                                                                             lb_routes, history, objectives):
    """Roll a bad --etcd-servers across the apiservers with a readiness gate. The first apiserver does not
    become ready, so it is rolled back and no other apiserver is touched: the API never loses all of its
    backends. The LB marks the broken one DOWN within its detection time (as in the scenario above), and from
    then on keeps every new connection away from it: real reads through the LB stay >= 99.5 % available from
    that moment to the end (at least 60 s of probing, see harness/thresholds.py; the whole-window figure, which
    includes the detection time, is reported)."""
    first = cluster.hosts(HostRole.CONTROLLER)[0]
    detection_max_s = allowed_s("lb_detection_s", cluster, objectives)
    wait_seen_in_rotation(history, first, UP_WITHIN_S)
    started = time.monotonic()
    with watching_lb_takes_out(cluster, history, first, timeout_s=detection_max_s + 5.0,
                               up_within_s=UP_WITHIN_S) as taken_out_at:
        result = rolling_flag_change(cluster, nemesis, {"--etcd-servers": cluster.unanswered_etcd_url()},
                                     ready_timeout_s=changed_ready_within_s(cluster))
        routed_around = every_client_routed_around_from(cluster, taken_out_at(), detection_max_s)
    time.sleep(lb_takes_back_s(cluster, objectives) + 1)
    observe_at_least(rolling_change_prober)
    whole = availability(history, f="api.get")
    detection, detected = judged_detection(cluster, history, first, detection_max_s, "lb_detection_s")
    api = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT,
                       window=(routed_around or started, time.monotonic()))
    verdicts = judge(history, *detection, api,
                     figures={"changed": result.changed, "failed_on": result.failed_on,
                              "availability_whole_window_pct": whole.figures.get("availability_pct")},
                     measures=[detected, from_verdict("availability_pct", api, "availability_pct")])
    assert result.failed_on == f"kube-apiserver@{first}" and result.changed == []
    assert all(cluster.apiserver(h).ready() for h in cluster.hosts(HostRole.CONTROLLER))
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.measures("availability_pct")
def test_a_rolling_good_change_reaches_every_apiserver_without_an_outage(cluster, nemesis, rolling_change_prober,
                                                                     history, objectives):
    """Roll a harmless flag change (--max-requests-inflight) across every apiserver, one at a time with the
    readiness gate, then roll it back the same way: it completes everywhere, every apiserver is ready again
    after the rollback, and the API stays >= 99.5 % available throughout (over at least 60 s, probed fast enough
    that each restart's cost of about one request per long-lived connection fits the budget). New connections,
    which the LB routes one by one, are judged on their own too (>= 99.5 %): the LB's health checks must take a
    stopping apiserver out before it stops (its shutdown delay) and keep its successor out until it is ready."""
    ready_timeout_s = changed_ready_within_s(cluster)
    result = rolling_flag_change(cluster, nemesis, {"--max-requests-inflight": "300"}, ready_timeout_s=ready_timeout_s)
    changed = list(result.changed)
    time.sleep(lb_takes_back_s(cluster, objectives) + 1)
    rolled_back = roll_back(cluster, nemesis, result, ready_timeout_s=ready_timeout_s)
    time.sleep(lb_takes_back_s(cluster, objectives) + 1)
    observe_at_least(rolling_change_prober)
    api = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT)
    routed = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT, new_connections=True)
    verdicts = judge(history, api, routed, figures={"changed": changed, "rolled_back": rolled_back},
                     measures=[from_verdict("availability_pct", api, "availability_pct"),
                               from_verdict("availability_pct", routed, "availability_pct", subject="new-connections")])
    assert result.completed and changed == [f"kube-apiserver@{h}" for h in cluster.hosts(HostRole.CONTROLLER)]
    assert rolled_back, "an apiserver was not ready within its start-up allowance after the rollback"
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.measures("lb_detection_hung_s", "availability_pct")
def test_a_hung_apiserver_is_taken_out_of_rotation(cluster, nemesis, new_connection_prober, lb_routes, history,
                                                   objectives):
    """SIGSTOP one apiserver: its listening socket still completes every TCP handshake (the kernel does), but
    nothing answers, neither requests nor the load balancer's checks. The LB marks it DOWN within its worst-case
    detection time for a hung server (each failing check lasts its whole timeout) and within the
    lb_detection_hung_s objective, and from then on routes around it: the API through the LB is >= 99.5 %
    available in the steady state that follows. SIGCONT at heal; the apiserver is ready again."""
    if len(cluster.hosts(HostRole.CONTROLLER)) < 2:
        lacks("two-apiservers", "one apiserver: there is nothing to route around it to")
    host = cluster.hosts(HostRole.CONTROLLER)[0]
    bound = allowed_s("lb_detection_hung_s", cluster, objectives)
    wait_seen_in_rotation(history, host, UP_WITHIN_S)
    with (watching_lb_takes_out(cluster, history, host, timeout_s=bound + 5.0, up_within_s=UP_WITHIN_S)
          as taken_out_at, nemesis.fault(Pause(component=f"kube-apiserver@{host}"))):
        start = every_client_routed_around_from(cluster, taken_out_at(), bound) or time.monotonic()
        steady = (start, start + STEADY_S)
        time.sleep(max(0.0, steady[1] - time.monotonic()))
    restored = until(cluster.apiserver(host).ready, STARTUP_ALLOWANCE_S[Component.APISERVER], 0.2).held
    time.sleep(lb_takes_back_s(cluster, objectives) + 1)
    detection, detected = judged_detection(cluster, history, host, bound, "lb_detection_hung_s")
    steady_api = availability(history, threshold_pct=AVAILABILITY_PCT, window=steady)
    verdicts = judge(history, *detection, steady_api,
                     figures={"apiserver": host, "ready_after_heal": restored,
                              "availability_whole_window_pct": availability(history).figures.get("availability_pct")},
                     measures=[detected, from_verdict("availability_pct", steady_api, "availability_pct")])
    assert restored, f"the apiserver on {host} was not ready within the start-up allowance after SIGCONT"
    assert all(verdicts), explain_all(verdicts)
