"""Probing component health endpoints."""

from __future__ import annotations

import socket

import requests
import urllib3

from harness.clients.tls import CachedContextAdapter
from harness.components.base import HealthProbe

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # self-signed component serving certs


def session() -> requests.Session:
    """A session that ignores REQUESTS_CA_BUNDLE & co. (they would override the cluster CA; GOTCHAS.md), and builds
    one TLS context per credential instead of one per connection (harness/clients/tls.py)."""
    s = requests.Session()
    s.trust_env = False
    s.mount("https://", CachedContextAdapter())
    return s


_SESSION = session()


def probe(check: HealthProbe, timeout: float = 1.0) -> bool:
    if check.kind == "tcp":
        try:
            with socket.create_connection((check.address, check.port), timeout=timeout):
                return True
        except OSError:
            return False
    cert = (str(check.client.cert), str(check.client.key)) if check.client else None
    verify: bool | str = str(check.ca) if check.ca else False
    try:
        return _SESSION.get(check.url, timeout=timeout, verify=verify, cert=cert).status_code == 200
    except requests.RequestException:
        return False
