"""Certificate rotation under fire (issue #24): every etcd member's peer certificate, then every apiserver's serving
certificate, issued again and put in place one host at a time, while clients read through the load balancer and
write through the API and to etcd."""

import time

import pytest

from harness.checkers import availability, durability
from harness.faults.cert_rotation import listener_of
from harness.lifecycle.cert_rotation import rolling_rotation, rotation_order
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge
from harness.scenario.certificates import served_certificates
from harness.scenario.helpers import twin_defect
from harness.target.capabilities import Capability
from harness.thresholds import AVAILABILITY_PCT

pytestmark = pytest.mark.requires(Capability.RUN_FILES)
# the reads are judged over at least this long: nothing restarts, so the 60 s that restarting scenarios observe
# (AVAILABILITY_MIN_WINDOW_S: a request lost per connection pinned to a restarted apiserver) does not apply; 20 s
# at 20/s is 400 requests, one of which is 0.25 % of the 0.5 % budget
OBSERVE_S = 20.0


@pytest.mark.destructive
@pytest.mark.measures("availability_pct", "lost_writes")
def test_every_peer_and_serving_certificate_is_rotated_one_host_at_a_time_without_an_outage(
        cluster, nemesis, rolling_change_prober, etcd_writer, kube_writer, history):
    """Each step issues the listener's certificate again (same names, new key, the CA its clients trust) and waits
    until the listener serves it, its clients' CA verifies it and the component is ready; only then the next host.
    Reads through the LB stay >= 99.5 % available; no acknowledged write (API or etcd) is lost; at the end every
    rotated listener serves a certificate other than before, and every listener's is trusted. The old certificates are put back
    afterwards (the nemesis heals the rotation)."""
    before = served_certificates(cluster)
    result = rolling_rotation(cluster, nemesis, new_ca_first=twin_defect(cluster, "rotation_new_ca_first"))
    after = served_certificates(cluster)
    if result.completed:  # a stopped rotation is judged on what clients saw until it stopped
        time.sleep(max(0.0, rolling_change_prober.started_at + OBSERVE_S - time.monotonic()))
    etcd_writer.stop()
    kube_writer.stop()
    api, writes = availability(history, f="api.get", threshold_pct=AVAILABILITY_PCT), durability(history, system="kube")
    rotated = [listener_of(component_id) for component_id in rotation_order(cluster)]
    unchanged = [what for what in rotated if after[what].fingerprint == before[what].fingerprint]
    untrusted = {what: cert.untrusted for what, cert in after.items() if cert.untrusted}
    verdicts = judge(
        history, api, durability(history, system="etcd"), writes,
        figures={"steps": result.rotated, "step_s": result.step_s, "failed_on": result.failed_on,
                 "reason": result.reason, "unchanged": unchanged, "untrusted": untrusted},
        measures=[from_verdict("availability_pct", api, "availability_pct"),
                  from_verdict("lost_writes", writes, "lost")])
    assert result.completed, f"the rotation stopped at {result.failed_on}: {result.reason}"
    assert not unchanged and not untrusted, f"still serving its old certificate: {unchanged}; untrusted: {untrusted}"
    assert all(verdicts), explain_all(verdicts)
