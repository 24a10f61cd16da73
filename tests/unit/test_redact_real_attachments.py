"""The redaction on what real scenarios attach: the History, verdicts, figures and tables of a main job (and the
components' log tails, which only a failing scenario attaches), one scenario per suite, kept trimmed under
tests/data/attachments/ (its README says from which run; tests/attachment_corpus.py refreshes it). The report is
refused when its scan finds a secret, so a false alarm on any of these costs the user the whole report, and a miss
puts a key in it."""

from __future__ import annotations

import base64
import datetime
import json
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from harness.report import allure_report
from harness.report.allure_report import secrets_in
from harness.report.redact import contains_secret, redact

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "attachments"
SAMPLES = sorted(path for path in CORPUS.rglob("*") if path.is_file() and path.suffix in (".txt", ".json"))


def _key_and_certificate() -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "planted")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now)
                   .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return key_pem, certificate.public_bytes(serialization.Encoding.PEM).decode()


def _planted() -> list[tuple[str, str, str]]:
    """(what, text to plant, the secret inside it) for each way a secret reaches an attachment: a key or certificate
    printed by a tool, a kubeconfig dumped whole, a request logged with its bearer token, a bootstrap token on a
    command line, a service account token, a password in a config."""
    key_pem, certificate_pem = _key_and_certificate()
    key_body = key_pem.splitlines()[1]
    certificate_body = certificate_pem.splitlines()[2]
    kubeconfig_data = base64.b64encode(key_pem.encode()).decode()
    kubeconfig = yaml.safe_dump({"users": [{"name": "admin", "user": {"client-key-data": kubeconfig_data}}]})
    token = "q7vJ2mXc9LwP4sTz8bNk3rYd"
    header = base64.urlsafe_b64encode(b'{"alg":"ES256","kid":"planted"}').decode().rstrip("=")
    claims = base64.urlsafe_b64encode(b'{"sub":"system:serviceaccount:kube-system:default"}').decode().rstrip("=")
    jwt = f"{header}.{claims}.c2lnbmF0dXJlLW9mLXRoZS1wbGFudGVkLXRva2Vu"
    return [
        ("private key", key_pem, key_body),
        ("certificate", certificate_pem, certificate_body),
        ("kubeconfig", kubeconfig, kubeconfig_data[:40]),
        ("bearer header", f'I1204 round_trippers.go:466] curl -v -H "Authorization: Bearer {token}"', token),
        ("bootstrap token flag", f"kubeadm join 10.0.0.1:6443 --token abcdef.{token[:16]} --discovery-token-ca-cert-hash"
                                 " sha256:0123", f"abcdef.{token[:16]}"),
        ("service account token", json.dumps({"status": {"token": jwt}}), jwt),
        ("password", "  password: c0rrect-h0rse-battery", "c0rrect-h0rse-battery"),
    ]


def _with(text: str, planted: str) -> str:
    """The attachment with `planted` put on a line of its own in its middle."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    return "".join(lines[:middle]) + planted + "\n" + "".join(lines[middle:])


def test_the_corpus_holds_a_real_scenario_of_every_suite_the_main_job_requires():
    required = set(yaml.safe_load((ROOT / "gate.yaml").read_text())["required_suites"])
    held = {path.parent.name for path in SAMPLES if path.name.startswith("history")}
    assert required <= held, f"no real attachments of {sorted(required - held)}: refresh with tests/attachment_corpus.py"
    kinds = {path.stem for path in SAMPLES}
    # components' log tails are attached only when a scenario fails (fixtures/observe.py): a green main job has none
    assert {"history-jsonl", "figures", "verdicts"} <= kinds, kinds


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_real_attachment_is_left_as_it_is_and_not_taken_for_a_secret(sample, tmp_path):
    text = sample.read_text()
    assert redact(text) == text
    assert not contains_secret(text)
    (tmp_path / sample.name).write_text(text)
    assert secrets_in(tmp_path) == []


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_secret_planted_in_a_real_attachment_is_found_and_only_it_is_removed(sample):
    text = sample.read_text()
    for what, planted, secret in _planted():
        leaking = _with(text, planted)
        assert contains_secret(leaking), f"{what} in {sample.name} not found"
        clean = redact(leaking)
        assert secret not in clean, f"{what} in {sample.name} not removed"
        # the rest of the attachment comes through: every line of the real one is still there
        kept = clean.splitlines()
        missing = [line for line in text.splitlines() if line not in kept]
        assert not missing, f"redacting {what} changed {len(missing)} lines of {sample.name}: {missing[:2]}"


def test_a_secret_planted_across_the_scans_chunks_of_a_large_real_attachment_is_found(tmp_path, monkeypatch):
    history = next(path for path in SAMPLES if path.name.startswith("history"))
    text = history.read_text()
    monkeypatch.setattr(allure_report, "CHUNK", 64 * 1024)
    monkeypatch.setattr(allure_report, "OVERLAP", 8 * 1024)
    repeated = text * (3 * allure_report.CHUNK // len(text) + 1)
    key_pem = _planted()[0][1]
    boundary = 2 * allure_report.CHUNK - len(key_pem) // 2  # the key straddles the second and third chunks
    (tmp_path / "history.txt").write_text(repeated[:boundary] + key_pem + repeated[boundary:])
    (tmp_path / "clean.txt").write_text(repeated)
    assert secrets_in(tmp_path) == ["history.txt"]
