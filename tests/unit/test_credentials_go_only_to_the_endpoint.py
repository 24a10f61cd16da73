"""The API credentials of an inventory go only to its api_endpoint, whatever server its kubeconfig names and whatever
the credential (a token, a client certificate): `quorum inventory check` and a run both connect through the
one-context kubeconfig Quorum writes (harness/remote/credentials.py). A kubeconfig whose user runs an exec
or auth-provider plugin is refused by name, and the plugin never runs.

Two TLS listeners on loopback play the inventory's load balancer (127.0.0.1) and the server the kubeconfig names
(127.0.0.2); each records the requests it gets."""

from __future__ import annotations

import base64
import copy
import http.server
import ipaddress
import json
import ssl
import threading
from pathlib import Path

import pytest
import yaml

from harness.inventory.check import api_rows
from harness.inventory.load import load_inventory
from harness.pki import Authority

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "quorum-test-token-0123456789"
VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.4", "gitCommit": "0", "gitTreeState": "clean",
           "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"}


class Recording(http.server.ThreadingHTTPServer):
    def __init__(self, address: str, pair, ca: Path) -> None:
        self.seen: list[tuple[str, str | None]] = []
        super().__init__((address, 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pair.cert, pair.key)
        self.socket = context.wrap_socket(self.socket, server_side=True)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        version = self.path.rstrip("/") == "/version"
        body = json.dumps(VERSION if version else {"kind": "Status", "code": 403}).encode()
        self.send_response(200 if version else 403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def listeners(tmp_path):
    authority = Authority(tmp_path / "ca", "quorum-test-ca")
    pair = authority.issue("server", "apiserver", server=True,
                           ips=(ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv4Address("127.0.0.2")))
    servers = [Recording(address, pair, authority.pair.cert) for address in ("127.0.0.1", "127.0.0.2")]
    threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in servers]
    for thread in threads:
        thread.start()
    try:
        yield authority, *servers
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def url(server: Recording) -> str:
    host, port = server.server_address[:2]
    return f"https://{host}:{port}"


def token_kubeconfig(work: Path, server: str, ca: Path | None = None, user: dict | None = None) -> Path:
    """A kubeconfig of one context whose server is `server`, authenticating with a token (or `user`)."""
    ca_data = base64.b64encode(ca.read_bytes()).decode() if ca else base64.b64encode(b"not checked here").decode()
    path = work / "user.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "elsewhere",
        "clusters": [{"name": "elsewhere", "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": "someone", "user": user or {"token": TOKEN}}],
        "contexts": [{"name": "elsewhere", "context": {"cluster": "elsewhere", "user": "someone"}}]}))
    path.chmod(0o600)
    return path


def inventory_with(work: Path, api_endpoint: str, kubeconfig: Path):
    """docs/examples/staging-inventory.yaml with this API endpoint and kubeconfig (its SSH files present)."""
    data = copy.deepcopy(yaml.safe_load((ROOT / "docs" / "examples" / "staging-inventory.yaml").read_text()))
    for name in ("key", "known_hosts"):
        (work / name).write_text("x")
        (work / name).chmod(0o600)
    data["kubeconfig"] = {"path": str(kubeconfig)}
    data["api_endpoint"], data["ssh"]["key_file"], data["ssh"]["known_hosts"] = api_endpoint, "key", "known_hosts"
    path = work / "inventory.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_inventory(path)


def test_a_token_goes_only_to_the_api_endpoint_not_to_the_kubeconfigs_server(tmp_path, listeners):
    authority, endpoint, elsewhere = listeners
    inventory = inventory_with(tmp_path, url(endpoint), token_kubeconfig(tmp_path, url(elsewhere), authority.pair.cert))
    rows = api_rows(inventory, tmp_path)
    assert rows[0].ok and "v1.34.4" in rows[0].detail, rows
    assert elsewhere.seen == [], elsewhere.seen
    assert endpoint.seen and {header for _, header in endpoint.seen} == {f"Bearer {TOKEN}"}, endpoint.seen


def test_a_client_certificate_goes_only_to_the_api_endpoint_too(tmp_path, listeners):
    authority, endpoint, elsewhere = listeners
    client = authority.issue("client", "admin", client=True)
    user = {"client-certificate-data": base64.b64encode(client.cert.read_bytes()).decode(),
            "client-key-data": base64.b64encode(client.key.read_bytes()).decode()}
    inventory = inventory_with(tmp_path, url(endpoint),
                               token_kubeconfig(tmp_path, url(elsewhere), authority.pair.cert, user))
    api_rows(inventory, tmp_path)
    assert elsewhere.seen == [] and endpoint.seen, (elsewhere.seen, endpoint.seen)


@pytest.mark.parametrize("plugin", ["exec", "auth-provider"])
def test_a_kubeconfig_plugin_is_refused_by_name_and_never_runs(tmp_path, listeners, plugin):
    authority, endpoint, elsewhere = listeners
    ran = tmp_path / "the-plugin-ran"
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "touch", "args": [str(ran)]}} \
        if plugin == "exec" else {"auth-provider": {"name": "oidc", "config": {"cmd-path": "touch"}}}
    inventory = inventory_with(tmp_path, url(endpoint), token_kubeconfig(tmp_path, url(elsewhere),
                                                                         authority.pair.cert, {**user, "token": TOKEN}))
    rows = api_rows(inventory, tmp_path)
    assert len(rows) == 1 and not rows[0].ok and f"an {plugin} plugin" in rows[0].detail, rows
    assert "never runs a command" in rows[0].detail and rows[0].fix
    assert not ran.exists() and endpoint.seen == [] and elsewhere.seen == []
