"""A marker object written through the API before or during a fault and read back after it: was it kept?"""

from __future__ import annotations

import secrets

import requests

from harness.clients.kubeapi import ApiClient
from harness.errors import ClusterError

MARKER_PATH, MARKER = "/api/v1/namespaces/default/configmaps", "quorum-marker"


def write_marker(api: ApiClient, *, refused_ok: bool = False) -> str | None:
    """Write a ConfigMap with a fresh value; returns the value, or None when the write failed and refused_ok (a
    scenario judging whether writes are accepted). On a new connection, so the write goes where the load balancer
    sends new clients now."""
    value, fresh = secrets.token_hex(8), api.on_a_new_connection()
    try:
        fresh.request("DELETE", f"{MARKER_PATH}/{MARKER}", timeout=10.0)
        response = fresh.request("POST", MARKER_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                                       "metadata": {"name": MARKER}, "data": {"value": value}})
        problem = None if response.status_code == 201 else f"HTTP {response.status_code} {response.text[:200]}"
    except requests.RequestException as error:
        problem = str(error)[:300]
    if problem is None:
        return value
    if refused_ok:
        return None
    raise ClusterError(f"could not write ConfigMap {MARKER}: {problem}", "quorum status shows what is unhealthy")


def read_marker(api: ApiClient) -> str | None:
    try:
        response = api.get(f"{MARKER_PATH}/{MARKER}", timeout=3.0)
    except requests.RequestException:
        return None
    return response.json().get("data", {}).get("value") if response.status_code == 200 else None
