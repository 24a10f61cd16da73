"""A component's serving certificate replaced on its host: one step of a certificate rotation. The new certificate
is the old one issued again with a new key by the CA its clients trust (new_ca: by a new CA of the same name, the
order a rotation must not take). Nothing restarts: kube-apiserver reloads its serving pair when the files change, etcd
reads its peer pair for every new connection (docs/lifecycle.md). Heal puts the old pair back from the copy the step
kept beside it, so `quorum heal` after a killed run restores it too."""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import FaultError
from harness.faults.component import ComponentFault
from harness.lifecycle.certificates import reissue
from harness.target.capabilities import Capability
from harness.target.protocol import Target

# the flags naming what a component serves: its certificate, its key, and the CA its clients trust (whose key lies
# beside it, as kubeadm and Quorum lay a PKI out: ca.crt and ca.key)
SERVED = {
    "kube-apiserver": ("--tls-cert-file", "--tls-private-key-file", "--client-ca-file"),
    "etcd": ("--peer-cert-file", "--peer-key-file", "--peer-trusted-ca-file"),
}
KEPT = ".quorum-before-rotation"  # the suffix of the old pair's copy on the host


def listener_of(component_id: str) -> str:
    """The listener (harness/scenario/certificates.py) a rotation of `component_id` changes."""
    component, host = component_id.split("@", 1)
    return f"etcd peer@{host}" if component == "etcd" else component_id


@dataclass
class RotateCertificate(ComponentFault):
    """Issue `component`'s ('kube-apiserver@c1' or 'etcd@c1', whose peer certificate) serving certificate again."""

    name = "rotate-certificate"
    # it signs with the cluster's CA key: only on clusters whose PKI Quorum made (kind's and a remote target's: not yet)
    requires = (Capability.RUN_FILES,)
    new_ca: bool = False

    def plan(self, target: Target) -> None:
        component, host = self.where()
        if component not in SERVED:
            raise FaultError(f"{component} serves no certificate a rotation replaces",
                             f"name {' or '.join(SERVED)} as <component>@<host>")
        flags = target.live_flags(component).get(host)
        if flags is None:
            raise FaultError(f"{self.component} is not running, so what it serves cannot be read",
                             "check `quorum status`")
        missing = [flag for flag in SERVED[component] if not flags.get(flag)]
        if missing:
            raise FaultError(f"{self.component} runs without {', '.join(missing)}: no certificate to rotate there",
                             "run it with TLS (the conformance TLS checks name what is missing)")
        cert, key, ca = (flags[flag] for flag in SERVED[component])
        ca_key = ca.removesuffix(".crt") + ".key"
        if not self._exists(target, ca_key):
            raise FaultError(f"{host} holds no key of the CA {ca} ({ca_key}), so {self.component}'s certificate "
                             "cannot be issued again", "a rotation needs the CA's key beside it (ca.crt, ca.key)")
        self.captured.update(cert=cert, key=key, ca=ca, ca_key=ca_key)

    def _exists(self, target: Target, path: str) -> bool:
        return target.exec(self.where()[1], ["sh", "-c", 'test -e "$1" && echo yes', "sh", path],
                           check=False).strip() == "yes"

    def act(self, target: Target) -> None:
        host, files = self.where()[1], self.captured
        old_cert, old_key = target.read_file(host, files["cert"]), target.read_file(host, files["key"])
        issued = reissue(old_cert, target.read_file(host, files["ca"]), target.read_file(host, files["ca_key"]),
                         new_ca=self.new_ca)
        # the old pair is kept first, so a heal after a kill at any point below can put it back; a copy already
        # there is the original's (a step healed only half), never overwritten with a rotated pair
        if not self._exists(target, files["cert"] + KEPT):
            target.put_file(host, files["key"] + KEPT, old_key)
            target.put_file(host, files["cert"] + KEPT, old_cert)
        self.captured["fingerprint"] = issued.fingerprint
        target.put_file(host, files["key"], issued.key_pem)
        target.put_file(host, files["cert"], issued.cert_pem)

    def undo(self, target: Target) -> None:
        host, files = self.where()[1], self.captured
        if not files:
            return  # never planned
        if self._exists(target, files["cert"] + KEPT):  # the whole old pair was kept: put it back
            target.put_file(host, files["key"], target.read_file(host, files["key"] + KEPT))
            target.put_file(host, files["cert"], target.read_file(host, files["cert"] + KEPT))
        # without the certificate's copy nothing was rotated yet: only a copy of the key may be left
        target.exec(host, ["rm", "-f", files["key"] + KEPT, files["cert"] + KEPT])
