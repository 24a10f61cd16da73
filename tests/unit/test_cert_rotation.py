"""A rotation's certificate: the old one issued again (names, usages, lifetime) with a new key by the CA its clients
trust; or, for the broken order, by a new CA of the same name that no client trusts. Checked with OpenSSL's own
verification of the chain (a real TLS handshake on loopback, tests/unit/test_served_certificates.py's server)."""

import datetime

import pytest
from cryptography import x509

from harness.clients.certificates import served_certificate
from harness.lifecycle.certificates import CertificateRotationError, reissue
from harness.pki import Authority, Pair
from tests.unit.test_served_certificates import tls_server


@pytest.fixture()
def ca(tmp_path) -> Authority:
    return Authority(tmp_path / "ca", "quorum-test-ca")


def _written(tmp_path, name: str, cert_pem: str, key_pem: str) -> Pair:
    pair = Pair(tmp_path / f"{name}.crt", tmp_path / f"{name}.key")
    pair.cert.write_text(cert_pem)
    pair.key.write_text(key_pem)
    return pair


def test_a_reissued_certificate_keeps_the_names_and_lifetime_and_its_clients_trust_it(ca, tmp_path):
    old = ca.issue("apiserver-c1", "kube-apiserver", server=True, dns=("kubernetes", "c1"),
                   validity=datetime.timedelta(days=90))
    issued = reissue(old.cert.read_text(), ca.pair.cert.read_text(), ca.pair.key.read_text())
    before, after = (x509.load_pem_x509_certificate(text.encode()) for text in (old.cert.read_text(), issued.cert_pem))
    names = x509.SubjectAlternativeName
    assert after.subject == before.subject and after.serial_number != before.serial_number
    assert after.extensions.get_extension_for_class(names).value == before.extensions.get_extension_for_class(names).value
    assert after.public_key() != before.public_key() and after.issuer == ca.cert.subject
    lifetime = before.not_valid_after_utc - before.not_valid_before_utc  # kept exactly: a rotation never stretches it
    assert after.not_valid_after_utc - after.not_valid_before_utc == lifetime
    with tls_server(_written(tmp_path, "new", issued.cert_pem, issued.key_pem)) as port:
        served = served_certificate("127.0.0.1", port, ca.pair.cert)
    assert served.untrusted is None and served.fingerprint == issued.fingerprint


def test_a_certificate_from_a_new_ca_of_the_same_name_is_not_trusted_by_the_clients(ca, tmp_path):
    old = ca.issue("peer-c1", "c1", server=True, client=True)
    issued = reissue(old.cert.read_text(), ca.pair.cert.read_text(), ca.pair.key.read_text(), new_ca=True)
    assert x509.load_pem_x509_certificate(issued.cert_pem.encode()).issuer == ca.cert.subject  # the same name
    with tls_server(_written(tmp_path, "new", issued.cert_pem, issued.key_pem)) as port:
        served = served_certificate("127.0.0.1", port, ca.pair.cert)
    assert served.untrusted is not None and "issuer" in served.untrusted


def test_a_ca_that_did_not_issue_the_certificate_is_refused_by_name(ca, tmp_path):
    other = Authority(tmp_path / "other", "someone-elses-ca")
    old = ca.issue("apiserver-c1", "kube-apiserver", server=True)
    with pytest.raises(CertificateRotationError, match="issued by CN=quorum-test-ca, not by the CA given"):
        reissue(old.cert.read_text(), other.pair.cert.read_text(), other.pair.key.read_text())
    with pytest.raises(CertificateRotationError, match="cannot be read"):
        reissue("not a certificate", ca.pair.cert.read_text(), ca.pair.key.read_text())
