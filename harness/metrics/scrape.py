"""Every apiserver's /metrics, each asked directly (not through the load balancer), read by the caller's parser."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from harness.target.protocol import Target

T = TypeVar("T")


def each_apiserver(cluster: Target, parse: Callable[[str], T], timeout_s: float = 15.0) -> dict[str, T]:
    """Controller host -> `parse` of its apiserver's /metrics answer. An apiserver that does not answer is left out
    of this scrape: a window between two scrapes then names it as missing."""
    taken: dict[str, T] = {}
    for host in cluster.hosts("controller"):
        try:
            response = cluster.apiserver(host).request("GET", "/metrics", timeout=timeout_s)
        except OSError:
            continue
        if response.status_code == 200:
            taken[host] = parse(response.text)
    return taken
