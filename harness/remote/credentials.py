"""The API credentials of a cluster Quorum did not build, from the inventory's kubeconfig: the context's CA and its
client certificate or bearer token, copied into the run directory (0600, outside reports/) with a kubeconfig of that
one context whose server is the inventory's API endpoint, so the official client and Quorum's own clients all reach
the API through the load balancer the inventory names."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import ClusterError
from harness.inventory.load import local_path
from harness.inventory.model import Inventory
from harness.pki import Pair


@dataclass(frozen=True)
class ApiCredentials:
    kubeconfig: Path  # the run directory's one-context kubeconfig
    ca: Path
    client: Pair | None
    token: str | None


def _write_private(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def _named(entries: list[dict] | None, name: str, kind: str, source: Path) -> dict:
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry.get(kind) or {}
    raise ClusterError(f"{source} has no {kind} named {name!r}", "correct the kubeconfig, or kubeconfig.context")


def _data(section: dict, key: str, source: Path) -> bytes | None:
    """A PEM from `<key>-data` (base64) or from the file `<key>` names (relative to the kubeconfig, as kubectl reads)."""
    if section.get(f"{key}-data"):
        try:
            return base64.b64decode(section[f"{key}-data"], validate=True)
        except ValueError:
            raise ClusterError(f"{source}: {key}-data is not base64", "export the kubeconfig again") from None
    if section.get(key):
        path = local_path(str(section[key]), source.parent)
        try:
            return path.read_bytes()
        except OSError as error:
            raise ClusterError(f"{source}: {key} {path} cannot be read: {error.strerror}",
                               "copy the file beside the kubeconfig, or embed it (kubectl config view --raw "
                               "--flatten)") from None
    return None


def api_credentials(inventory: Inventory, base: Path, run_dir: Path) -> ApiCredentials:
    """Copy the context's credentials into run_dir; ClusterError naming what the kubeconfig lacks."""
    source = local_path(inventory.kubeconfig.path, base)
    try:
        config = yaml.safe_load(source.read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ClusterError(f"{source} is not a readable kubeconfig: {error}", "check kubeconfig.path") from None
    context_name = inventory.kubeconfig.context or config.get("current-context")
    if not context_name:
        raise ClusterError(f"{source} has no current-context", "set kubeconfig.context in the inventory")
    context = _named(config.get("contexts"), context_name, "context", source)
    cluster = _named(config.get("clusters"), context.get("cluster", ""), "cluster", source)
    user = _named(config.get("users"), context.get("user", ""), "user", source)
    for plugin in ("exec", "auth-provider"):  # refused by name, before anything could run it
        if user.get(plugin):
            command = user[plugin].get("command", "") if isinstance(user[plugin], dict) else ""
            raise ClusterError(f"{source}: user {context.get('user')!r} authenticates with an {plugin} plugin"
                               + (f" ({command})" if command else "") + ": Quorum never runs a command a kubeconfig "
                               "names", "give Quorum a kubeconfig whose user has a client certificate and key or a "
                               "token (e.g. a service account's)")
    ca = _data(cluster, "certificate-authority", source)
    if ca is None:
        raise ClusterError(f"{source}: cluster {context.get('cluster')!r} names no certificate authority",
                           "add certificate-authority-data: Quorum verifies the API's certificate, always")
    cert, key = _data(user, "client-certificate", source), _data(user, "client-key", source)
    token = user.get("token")
    if (cert is None or key is None) and not token:
        raise ClusterError(f"{source}: user {context.get('user')!r} has neither a client certificate and key nor a "
                           "token",
                           "give Quorum a kubeconfig with a client certificate or a service account token")
    directory = run_dir / "pki"
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    _write_private(directory / "ca.crt", ca)
    client = None
    written_user: dict = {"token": token} if token else {}
    if cert is not None and key is not None:
        client = Pair(directory / "client.crt", directory / "client.key")
        _write_private(client.cert, cert)
        _write_private(client.key, key)
        written_user = {"client-certificate-data": base64.b64encode(cert).decode(),
                        "client-key-data": base64.b64encode(key).decode()}
    kubeconfig = run_dir / "kubeconfig"
    _write_private(kubeconfig, yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": inventory.name,
        "clusters": [{"name": inventory.name, "cluster": {
            "server": inventory.api_endpoint, "certificate-authority-data": base64.b64encode(ca).decode()}}],
        "users": [{"name": inventory.name, "user": written_user}],
        "contexts": [{"name": inventory.name, "context": {"cluster": inventory.name, "user": inventory.name}}],
    }).encode())
    return ApiCredentials(kubeconfig, directory / "ca.crt", client, token if client is None else None)


def load_pair(credentials: ApiCredentials) -> tuple[Path, Pair]:
    """The CA and client pair the API load runs as: the kubeconfig's (the load's users take a client certificate)."""
    if credentials.client is None:
        from harness.target.protocol import Unsupported

        raise Unsupported("API load with a token kubeconfig: the load's users authenticate with a client certificate; "
                          "give kubeconfig a context with client-certificate and client-key")
    return credentials.ca, credentials.client
