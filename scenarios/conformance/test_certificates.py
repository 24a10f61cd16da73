"""Certificates: every TLS listener of the control plane serves a certificate its clients trust, with time left.

Read-only (marker `conformance`). What each listener serves is read over TLS, as its clients meet it
(harness/scenario/certificates.py), so an expired certificate, one signed by another CA, or one about to expire on
a single host is named before a client meets it. The days left are judged against the certificate_days_left
objective (docs/gate.md).
"""

import pytest

from harness.objectives.measurement import Measurement
from harness.scenario import explain_all, judge
from harness.scenario.certificates import served_certificates

pytestmark = pytest.mark.conformance


@pytest.mark.measures("certificate_days_left")
def test_every_listener_serves_a_certificate_its_clients_trust_with_the_days_left_the_objective_needs(cluster,
                                                                                                        history):
    """Invariant: each apiserver and each etcd member's client and peer listener serves a certificate that the CA
    its clients trust verifies (OpenSSL: chain and validity), and the one closest to expiry has at least the
    certificate_days_left objective left. Source: seed 000 (TLS everywhere between controllers); the objective's
    source is in docs/gate.md."""
    served = served_certificates(cluster)
    assert served, f"{cluster.name} names no apiserver or etcd TLS listener to read a certificate from"
    untrusted = {what: f"{cert.untrusted} (issuer {cert.issuer}, valid until {cert.not_after:%Y-%m-%d %H:%M} UTC)"
                 for what, cert in served.items() if cert.untrusted}
    days = {what: cert.days_left() for what, cert in served.items()}
    closest = min(days, key=days.get)
    verdicts = judge(history, figures={"days_left": days, "issuers": {w: c.issuer for w, c in served.items()}},
                     measures=[Measurement("certificate_days_left", days[closest])])
    assert not untrusted, f"certificates their clients do not trust: {untrusted}"
    assert all(verdicts), f"{closest}: {explain_all(verdicts)}"
