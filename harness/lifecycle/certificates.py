"""A serving certificate issued again, as a rotation issues it: the same names and usages, a new key, a new serial,
the same lifetime from now, signed by the CA the listener's clients trust. With new_ca, signed by a new CA of the same
name instead: the order a rotation must not take (the clients still trust the old CA only)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from harness.errors import QuorumError

BACKDATE = datetime.timedelta(minutes=5)  # as harness/pki.py: a host whose clock is a little behind accepts it
# recomputed for the new key and issuer, not copied
_KEY_IDS = (x509.SubjectKeyIdentifier.oid, x509.AuthorityKeyIdentifier.oid)


class CertificateRotationError(QuorumError):
    pass


@dataclass(frozen=True)
class Issued:
    cert_pem: str
    key_pem: str
    fingerprint: str  # sha256, hex: what the listener must serve once it runs the new certificate


def fingerprint(cert: x509.Certificate) -> str:
    return cert.fingerprint(hashes.SHA256()).hex()


def _load(cert_pem: str, ca_cert_pem: str, ca_key_pem: str) -> tuple[x509.Certificate, x509.Certificate, object]:
    try:
        return (x509.load_pem_x509_certificate(cert_pem.encode()), x509.load_pem_x509_certificate(ca_cert_pem.encode()),
                serialization.load_pem_private_key(ca_key_pem.encode(), None))
    except ValueError as error:
        raise CertificateRotationError(f"a certificate or the CA's key cannot be read: {error}",
                                       "the component's certificate, its CA and the CA's key must be PEM") from None


def _new_ca(old: x509.Certificate) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    start = datetime.datetime.now(datetime.timezone.utc) - BACKDATE
    cert = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(old.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + (old.not_valid_after_utc - old.not_valid_before_utc))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def reissue(cert_pem: str, ca_cert_pem: str, ca_key_pem: str, *, new_ca: bool = False) -> Issued:
    """The certificate `cert_pem` issued again with a new key by the CA (`ca_cert_pem`, `ca_key_pem`), or by a new CA
    of the same name."""
    old, ca, ca_key = _load(cert_pem, ca_cert_pem, ca_key_pem)
    if old.issuer != ca.subject:
        raise CertificateRotationError(f"the certificate was issued by {old.issuer.rfc4514_string()}, not by the CA "
                                       f"given ({ca.subject.rfc4514_string()})",
                                       "name the CA that issued it (the one its clients trust)")
    if new_ca:
        ca, ca_key = _new_ca(ca)
    key = ec.generate_private_key(ec.SECP256R1())
    start = datetime.datetime.now(datetime.timezone.utc) - BACKDATE
    builder = (x509.CertificateBuilder().subject_name(old.subject).issuer_name(ca.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(start).not_valid_after(start + (old.not_valid_after_utc - old.not_valid_before_utc)))
    for extension in old.extensions:
        if extension.oid not in _KEY_IDS:
            builder = builder.add_extension(extension.value, extension.critical)
    builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                    critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return Issued(cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem, fingerprint(cert))
