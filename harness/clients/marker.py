"""A marker object written through the API before or during a fault and read back after it: was it kept?"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import requests

from harness.clients.kubeapi import ApiClient
from harness.errors import ClusterError

MARKER_PATH, MARKER = "/api/v1/namespaces/default/configmaps", "quorum-marker"


@dataclass(frozen=True)
class MarkerWrite:
    """Writing the marker: the value written, or why the API refused it; how many attempts and seconds it took."""
    value: str | None
    problem: str | None = None
    attempts: int = 1
    took_s: float = 0.0


def try_write_marker(api: ApiClient, timeout_s: float = 10.0) -> MarkerWrite:
    """Write a ConfigMap with a fresh value on a new connection, so the write goes where the load balancer sends
    new clients now; a refusal is a result (a scenario judging whether writes are accepted), not an error."""
    value, fresh, started = secrets.token_hex(8), api.on_a_new_connection(), time.monotonic()
    try:
        fresh.request("DELETE", f"{MARKER_PATH}/{MARKER}", timeout=timeout_s)
        response = fresh.request("POST", MARKER_PATH, {"apiVersion": "v1", "kind": "ConfigMap",
                                                       "metadata": {"name": MARKER}, "data": {"value": value}},
                                 timeout=timeout_s)
    except requests.RequestException as error:
        return MarkerWrite(None, str(error)[:300], took_s=time.monotonic() - started)
    took = time.monotonic() - started
    if response.status_code != 201:
        return MarkerWrite(None, f"HTTP {response.status_code} {response.text[:200]}", took_s=took)
    return MarkerWrite(value, took_s=took)


def write_marker_within(api: ApiClient, deadline_s: float, attempt_timeout_s: float = 10.0) -> MarkerWrite:
    """Write the marker as a client that retries does (a controller, kubectl run again): attempts on new
    connections until one is accepted or deadline_s has passed; the last refusal when none was."""
    started, attempts = time.monotonic(), 0
    while True:
        attempts += 1
        left = deadline_s - (time.monotonic() - started)
        written = try_write_marker(api, timeout_s=max(1.0, min(attempt_timeout_s, left)))
        elapsed = time.monotonic() - started
        if written.value is not None or elapsed + 1.0 >= deadline_s:
            return MarkerWrite(written.value, written.problem, attempts, round(elapsed, 2))
        time.sleep(1.0)


def write_marker(api: ApiClient) -> str:
    """The value written; a refused write is a ClusterError (the cluster was meant to be healthy)."""
    written = try_write_marker(api)
    if written.value is None:
        raise ClusterError(f"could not write ConfigMap {MARKER}: {written.problem}",
                           "quorum status shows what is unhealthy")
    return written.value


def read_marker(api: ApiClient) -> str | None:
    try:
        response = api.get(f"{MARKER_PATH}/{MARKER}", timeout=3.0)
    except requests.RequestException:
        return None
    return response.json().get("data", {}).get("value") if response.status_code == 200 else None
