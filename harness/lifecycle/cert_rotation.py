"""A certificate rotation, one host at a time: each etcd member's peer certificate, then each apiserver's serving
certificate, is issued again and written on its host; the next is touched only once the listener serves the new
certificate, its clients' CA verifies it and the component is ready. A step that fails that gate is put back and
the rotation stops, so at most one listener ever serves what its clients might not trust."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.clients.certificates import CertificateUnreadable, ServedCertificate
from harness.faults import Nemesis
from harness.faults.cert_rotation import RotateCertificate, listener_of
from harness.scenario.certificates import Listener, listeners, served_by
from harness.scenario.rollout import component_ready
from harness.target.protocol import HostRole, Target
from harness.thresholds import CERTIFICATE_RELOAD_S
from harness.wait import until


@dataclass
class RotationResult:
    rotated: list[str] = field(default_factory=list)  # '<component>@<host>' serving its new certificate
    failed_on: str | None = None  # the step that did not pass its gate (put back)
    reason: str = ""
    step_s: dict[str, float] = field(default_factory=dict)  # each rotated step: files written until the gate passed

    @property
    def completed(self) -> bool:
        return self.failed_on is None


def rotation_order(cluster: Target) -> list[str]:
    """The etcd members' peer certificates first (the apiservers never see them), then the apiservers'."""
    return [f"etcd@{host}" for host in cluster.hosts(HostRole.ETCD)] + \
        [f"kube-apiserver@{host}" for host in cluster.hosts(HostRole.CONTROLLER)]


def _serving(listener: Listener, fingerprint: str, timeout_s: float) -> ServedCertificate | None:
    """What the listener serves once it serves `fingerprint`; None if it never did within `timeout_s`."""
    def serving() -> ServedCertificate | None:
        try:
            served = served_by(listener)
        except CertificateUnreadable:
            return None  # a listener reloading its pair may refuse a handshake for a moment
        return served if served.fingerprint == fingerprint else None

    return until(serving, timeout_s, 0.5).value


def _gate(cluster: Target, component_id: str, listener: Listener, fault: RotateCertificate) -> str:
    """Why the step is not done: '' once the new certificate is served, trusted, and the component ready."""
    served = _serving(listener, fault.captured["fingerprint"], CERTIFICATE_RELOAD_S)
    if served is None:
        return f"{listener.what} did not serve its new certificate within {CERTIFICATE_RELOAD_S:g} s"
    if served.untrusted:
        return (f"{listener.what} serves a certificate its clients do not trust: {served.untrusted} "
                f"(issuer {served.issuer})")
    if not until(lambda: component_ready(cluster, component_id), CERTIFICATE_RELOAD_S, 0.5).held:
        return f"{component_id} was not ready within {CERTIFICATE_RELOAD_S:g} s of serving its new certificate"
    return ""


def rolling_rotation(cluster: Target, nemesis: Nemesis, *, new_ca_first: bool = False) -> RotationResult:
    """Rotate every listener in rotation_order, one at a time, gated. new_ca_first: the first step issues its
    certificate from a new CA (the defect of a rotation that swaps the CA before the clients trust it)."""
    result = RotationResult()
    with tempfile.TemporaryDirectory(prefix="quorum-rotation-") as scratch:
        found = {listener.what: listener for listener in listeners(cluster, Path(scratch))}
        for step, component_id in enumerate(rotation_order(cluster)):
            started = time.monotonic()
            fault = nemesis.inject(RotateCertificate(component=component_id, new_ca=new_ca_first and step == 0))
            problem = _gate(cluster, component_id, found[listener_of(component_id)], fault)
            if problem:
                nemesis.heal(fault)
                result.failed_on, result.reason = component_id, problem
                return result
            result.step_s[component_id] = round(time.monotonic() - started, 2)
            result.rotated.append(component_id)  # the nemesis holds the fault and heals it at the end
    return result
