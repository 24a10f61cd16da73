"""What the checkpointer reads on its node: the API, as the node's kubelet (its kubeconfig and client certificate,
so the Node authorizer limits it to the pods bound to this node and the secrets and config maps they use), and the
container runtime's pod sandboxes through crictl (which carry each pod's annotations, also while the API is away).

Why not the kubelet's /pods, as bootkube read it: the kubelet's port authorizes each request with a
SubjectAccessReview, which needs the API the checkpointer must do without (docs/checkpointer.md)."""

from __future__ import annotations

import base64
import json
import re
import ssl
import subprocess
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from harness.checkpointer import manifest

API_TIMEOUT_S = 5.0
CRICTL_TIMEOUT_S = 10.0
READY = "SANDBOX_READY"


class NodeError(RuntimeError):
    """The node is not set up as the checkpointer needs (a missing kubeconfig, crictl or runtime socket)."""


@dataclass(frozen=True)
class Kubeconfig:
    server: str
    certificate_authority: Path
    client_certificate: Path
    client_key: Path


def _field(text: str, key: str) -> str | None:
    found = re.search(rf"^\s*{re.escape(key)}:\s*(\S+)\s*$", text, re.MULTILINE)
    return found.group(1).strip("'\"") if found else None


def read_kubeconfig(path: Path, certificate_authority: Path) -> Kubeconfig:
    """The server and client certificate of kubeadm's kubelet.conf (one cluster, one user; read without a YAML
    library, which the node image does not have). The CA is the cluster's, from the node's pki directory."""
    try:
        text = path.read_text()
    except OSError as error:
        raise NodeError(f"cannot read the kubelet's kubeconfig {path}: {error}") from None
    server, certificate = _field(text, "server"), _field(text, "client-certificate")
    key = _field(text, "client-key")
    if not server or not server.startswith("https://") or not certificate or not key:
        raise NodeError(f"{path} names no https server and client certificate files (a kubeadm kubelet.conf does)")
    return Kubeconfig(server.rstrip("/"), certificate_authority, Path(certificate), Path(key))


class Api:
    """The API as this node's kubelet. Every call answers None when the API did not: the checkpointer's input is
    whether the API answered, never an exception."""

    def __init__(self, config: Kubeconfig, node: str) -> None:
        self.config, self.node = config, node

    def _context(self) -> ssl.SSLContext:
        # built per call: the kubelet rotates its client certificate in place
        context = ssl.create_default_context(cafile=str(self.config.certificate_authority))
        context.load_cert_chain(str(self.config.client_certificate), str(self.config.client_key))
        return context

    def _get(self, path: str) -> dict | None:
        try:
            with urllib.request.urlopen(self.config.server + path, timeout=API_TIMEOUT_S,
                                        context=self._context()) as response:
                return json.loads(response.read())
        except (OSError, ValueError, ssl.SSLError):  # URLError and timeouts are OSErrors
            return None

    def pods(self) -> list[dict] | None:
        """The pods bound to this node; None when the API did not answer."""
        selector = urllib.parse.quote(f"spec.nodeName={self.node}")
        answer = self._get(f"/api/v1/pods?fieldSelector={selector}")
        return None if answer is None else answer.get("items", [])

    def fetch(self, kind: str, namespace: str, name: str) -> dict[str, bytes] | None:
        """A secret's or config map's keys as bytes; None when the API did not answer."""
        if kind not in ("secrets", "configmaps"):
            raise ValueError(f"the checkpointer copies secrets and configmaps, not {kind}")
        answer = self._get(f"/api/v1/namespaces/{manifest.object_name(namespace, 'namespace')}/{kind}/"
                           f"{manifest.object_name(name, kind)}")
        if answer is None:
            return None
        if kind == "secrets":
            return {key: base64.b64decode(value) for key, value in (answer.get("data") or {}).items()}
        return ({key: value.encode() for key, value in (answer.get("data") or {}).items()}
                | {key: base64.b64decode(value) for key, value in (answer.get("binaryData") or {}).items()})


class Runtime:
    """The container runtime's pod sandboxes on this node (crictl pods)."""

    def __init__(self, crictl: str, endpoint: str) -> None:
        self.command = [crictl, "--runtime-endpoint", endpoint, "pods", "-o", "json"]

    def sandboxes(self) -> list[dict]:
        try:
            done = subprocess.run(self.command, capture_output=True, text=True, timeout=CRICTL_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise NodeError(f"{self.command[0]} could not list the runtime's pods: {error}") from None
        if done.returncode != 0:
            raise NodeError(f"{' '.join(self.command)} exited {done.returncode}: {done.stderr.strip()[:300]}")
        try:
            return json.loads(done.stdout).get("items") or []
        except (ValueError, AttributeError) as error:
            raise NodeError(f"{self.command[0]} printed no pod list: {error}") from None


def local_pods(sandboxes: list[dict]) -> tuple[list[dict], set[str]]:
    """The pods the node knows, as metadata (a sandbox carries its pod's name, namespace and annotations), and the
    full names of those it runs (a ready sandbox; a pod's newest sandbox decides)."""
    newest: dict[str, dict] = {}
    for sandbox in sandboxes:
        metadata = sandbox.get("metadata") or {}
        name = f"{metadata.get('namespace')}/{metadata.get('name')}"
        if int(sandbox.get("createdAt") or 0) >= int(newest.get(name, {}).get("createdAt") or 0):
            newest[name] = sandbox
    pods, running = [], set()
    for name, sandbox in newest.items():
        metadata = sandbox.get("metadata") or {}
        pods.append({"metadata": {"name": metadata.get("name"), "namespace": metadata.get("namespace"),
                                  "annotations": sandbox.get("annotations") or {}}})
        if sandbox.get("state") == READY:
            running.add(name)
    return pods, running
