"""Network bandwidth between hosts: what the links carry, that a limit is enforced, and what a slow
controller link does to the API."""

import statistics
import time

import pytest

from harness.monitors.bandwidth import iperf3_gbit
from harness.checkers import availability
from harness.faults import Bandwidth
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import AVAILABILITY_PCT, BANDWIDTH_TOLERANCE, HOST_TO_HOST_FLOOR_GBIT
from harness.scenario.skips import lacks

# the links between the cluster's own hosts (a pod network has its own suite, test_pod_bandwidth.py)
pytestmark = pytest.mark.requires(Capability.HOST_BANDWIDTH)

LIMIT_MBIT = 100.0  # GOTCHAS measured tbf at this rate: 96.2 Mbit/s
SLOW_LINK_MBIT = 1.0


@pytest.fixture
def iperf3(cluster) -> str:
    """iperf3 on every host: Quorum's own on a cluster it built, the owner's on one it did not (a host without it
    skips the scenario with its name, as the plugin does for what a target cannot give)."""
    return cluster.tool_path("iperf3")


def pairs(cluster):
    controllers = cluster.hosts(HostRole.CONTROLLER)
    return [(controllers[0], other) for other in controllers[1:2] + cluster.hosts(HostRole.LOADBALANCER)]


@pytest.mark.conformance
@pytest.mark.usefixtures("iperf3")
def test_host_to_host_bandwidth(cluster, history):
    """iperf3 between controllers and to the load balancer: each link carries at least the 5 Gbit/s Typhoon
    quotes pod-to-pod on a t3.small (ANCHORS); the figures are reported."""
    if len(cluster.hosts()) < 2:
        lacks("two-hosts", "one host: there is no host-to-host link")
    measured = {f"{a}->{b}": round(iperf3_gbit(cluster, a, b), 2) for a, b in pairs(cluster)}
    judge(history, figures={"gbit_per_s": measured, "floor_gbit_per_s": HOST_TO_HOST_FLOOR_GBIT})
    slow = {link: rate for link, rate in measured.items() if rate < HOST_TO_HOST_FLOOR_GBIT}
    assert not slow, f"links below {HOST_TO_HOST_FLOOR_GBIT} Gbit/s: {slow}"


@pytest.mark.destructive
@pytest.mark.usefixtures("iperf3")
def test_a_bandwidth_limit_is_enforced(cluster, nemesis, history):
    """Limit a controller's link to 100 Mbit/s (tbf): iperf3 measures within 10 % of the limit; after heal the
    link carries at least what a healthy link must (the host-to-host floor), so the heal really removed it."""
    if not pairs(cluster):
        lacks("two-hosts", "one host: there is no link to measure")
    sender, receiver = pairs(cluster)[0]
    with nemesis.fault(Bandwidth(host=sender, rate_mbit=LIMIT_MBIT)):
        limited = iperf3_gbit(cluster, sender, receiver) * 1000
    after = iperf3_gbit(cluster, sender, receiver) * 1000
    error = abs(limited - LIMIT_MBIT) / LIMIT_MBIT
    judge(history, figures={"limit_mbit": LIMIT_MBIT, "measured_mbit": round(limited, 1), "error_pct": round(100 * error, 1),
                            "after_heal_mbit": round(after, 1), "floor_gbit_per_s": HOST_TO_HOST_FLOOR_GBIT})
    # both checks are said when both fail: on a slow link the floor after the heal is the finding, whatever the
    # limit's accuracy over it
    problems = [f"{limited:.1f} Mbit/s measured under a {LIMIT_MBIT:g} Mbit/s limit"] if error > BANDWIDTH_TOLERANCE \
        else []
    if after < HOST_TO_HOST_FLOOR_GBIT * 1000:
        problems.append(f"after heal the link carries only {after:.1f} Mbit/s, below the {HOST_TO_HOST_FLOOR_GBIT} "
                        "Gbit/s floor")
    assert not problems, "; ".join(problems)


def latency_ms(history, window):
    ops = [o for o in history.ops_of("api.readyz") if o.ok and window[0] <= o.invoke <= window[1]]
    if not ops:
        return None
    values = sorted(o.latency * 1000 for o in ops)
    return {"p50": round(statistics.median(values), 1), "p99": round(values[int(0.99 * (len(values) - 1))], 1)}


@pytest.mark.destructive
@pytest.mark.measures("availability_pct")
def test_the_api_stays_available_when_a_controller_link_is_slow(cluster, nemesis, api_prober, history, profile):
    """Throttle one controller's link to 1 Mbit/s. The API through the load balancer stays >= 99.5 %
    available; the change in its latency (p50/p99 before vs during) is reported."""
    if len(cluster.hosts(HostRole.CONTROLLER)) < 2:
        lacks("two-controllers", "one controller: a slow link is the whole cluster's link")
    host = cluster.hosts(HostRole.CONTROLLER)[0]
    time.sleep(profile.soak_s)
    before = (api_prober.started_at, time.monotonic())
    with nemesis.fault(Bandwidth(host=host, rate_mbit=SLOW_LINK_MBIT)):
        start = time.monotonic()
        time.sleep(max(15.0, profile.soak_s))
        during = (start, time.monotonic())
    api = availability(history, threshold_pct=AVAILABILITY_PCT)
    verdicts = judge(history, api, measures=[from_verdict("availability_pct", api, "availability_pct")],
                     figures={"slow_host": host, "link_mbit": SLOW_LINK_MBIT,
                              "latency_before_ms": latency_ms(history, before),
                              "latency_during_ms": latency_ms(history, during)})
    assert all(verdicts), explain_all(verdicts)
