"""The API call latency SLI as the apiservers measure it: ClusterLoader2's APIResponsivenessPrometheus (its
"simple" query), computed from two scrapes of every apiserver's /metrics instead of a Prometheus server.

For each (resource, subresource, verb, scope), the buckets of apiserver_request_duration_seconds are summed over the
apiservers and taken as the difference between the scrape after and the one before; p99 is PromQL's
histogram_quantile over that difference. The same exclusions as ClusterLoader2 (`resource!="events",
verb!~"WATCH|WATCHLIST|PROXY|CONNECT"`) and its thresholds: LIST 5 s (30 s at cluster scope), every other verb 1 s
(docs/load.md cites both)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from harness import thresholds
from harness.metrics.prometheus_text import Histogram, Labels, histogram_quantile, histograms, increase
from harness.metrics.scrape import each_apiserver

if TYPE_CHECKING:
    from harness.target.protocol import Target

FAMILY = "apiserver_request_duration_seconds"
EXCLUDED_VERBS = {"WATCH", "WATCHLIST", "PROXY", "CONNECT"}  # streaming and long-running: no latency to judge


@dataclass(frozen=True, order=True)
class ApiCall:
    resource: str
    subresource: str
    verb: str
    scope: str


Scrape = dict[str, dict[ApiCall, Histogram]]  # apiserver host -> call -> buckets


@dataclass(frozen=True)
class ServerRow:
    """One call kind over a window, from the apiservers' own histograms."""

    resource: str
    subresource: str
    verb: str
    scope: str
    count: int
    p50_s: float
    p90_s: float
    p99_s: float
    slo_s: float
    slow: int  # requests above the SLO (ClusterLoader2's SlowCount), exact at the SLO's bucket bound

    def as_dict(self) -> dict:
        return asdict(self)


def slo_for_call(verb: str, scope: str) -> float:
    """ClusterLoader2's getSLOThreshold: a LIST 30 s at cluster scope and 5 s otherwise, any other call 1 s."""
    if verb != "LIST":
        return thresholds.SLO_GET_S
    return thresholds.SLO_LIST_CLUSTER_S if scope == "cluster" else thresholds.SLO_LIST_NAMESPACE_S


def calls(text: str) -> dict[ApiCall, Histogram]:
    """One apiserver's /metrics answer: buckets per call kind, summed over the labels the SLI does not split by
    (group, version, component, dry_run), without events and the streaming and long-running verbs."""
    summed: dict[ApiCall, Histogram] = {}
    for labels, buckets in histograms(text, FAMILY).items():
        named = dict(labels)
        if named.get("verb") in EXCLUDED_VERBS or named.get("resource") == "events":
            continue
        call = ApiCall(named.get("resource", ""), named.get("subresource", ""), named.get("verb", ""),
                       named.get("scope", ""))
        into = summed.setdefault(call, {})
        for bound, count in buckets.items():
            into[bound] = into.get(bound, 0.0) + count
    return summed


def scrape(cluster: Target, timeout_s: float = 15.0) -> Scrape:
    """Every controller's apiserver, asked directly (not through the load balancer). An apiserver that does not
    answer is left out of this scrape: its requests in the window are then missing, which `between` reports."""
    return each_apiserver(cluster, calls, timeout_s)


def between(before: Scrape, after: Scrape) -> tuple[list[ServerRow], list[str]]:
    """The rows of the window between two scrapes, and the apiservers missing from either (their requests in the
    window are not counted)."""
    missing = sorted(set(before) ^ set(after))
    window: dict[ApiCall, Histogram] = {}
    for host in sorted(set(before) & set(after)):
        for call, buckets in after[host].items():
            into = window.setdefault(call, {})
            for bound, count in increase(before[host].get(call, {}), buckets).items():
                into[bound] = into.get(bound, 0.0) + count
    rows = []
    for call, buckets in sorted(window.items()):
        total = buckets.get(float("inf"), 0.0)
        if total <= 0:
            continue
        slo = slo_for_call(call.verb, call.scope)
        within = max((count for bound, count in buckets.items() if bound <= slo), default=0.0)
        rows.append(ServerRow(call.resource, call.subresource, call.verb, call.scope, round(total),
                              *(round(histogram_quantile(q, buckets) or 0.0, 4) for q in (0.5, 0.9, 0.99)),
                              slo, round(total - within)))
    return rows, missing


def table_text(rows: list[ServerRow]) -> str:
    lines = ["server-side (the apiservers' apiserver_request_duration_seconds, summed; ClusterLoader2's simple query)",
             "verb     resource            scope      count   p50(s)  p90(s)  p99(s)  over SLO  SLO(s)"]
    for r in rows:
        name = r.resource + (f"/{r.subresource}" if r.subresource else "")
        lines.append(f"{r.verb:<8} {name:<19} {r.scope:<10} {r.count:>6}  {r.p50_s:>6.3f}  {r.p90_s:>6.3f}  "
                     f"{r.p99_s:>6.3f}  {r.slow:>8}  {r.slo_s:>6.0f}")
    return "\n".join(lines)
