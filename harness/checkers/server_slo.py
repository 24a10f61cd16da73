"""The API call latency SLO judged where the SLI is defined: inside the apiservers (ClusterLoader2's
APIResponsivenessPrometheus over the load's window, harness/metrics/api_responsiveness.py), with the load's own
client-side figure of each call beside it, and the calls on which the two sides disagree named (docs/load.md)."""

from __future__ import annotations

from harness import thresholds
from harness.checkers.slo import latency_table
from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History
from harness.metrics.api_responsiveness import ServerRow
from harness.objectives.measurement import Measurement

EVENT = "server-side-latency"  # recorded by the load fixture once the load stopped (scenarios/load/conftest.py)
SERVER_VERB = {"get": "GET", "list": "LIST", "create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}


def server_rows(history: History) -> tuple[list[ServerRow], list[str]] | None:
    """The rows of the last server-side scrape pair and the apiservers missing from it; None if never scraped."""
    events = history.events_of(EVENT)
    if not events:
        return None
    return [ServerRow(**row) for row in events[-1].get("rows", [])], list(events[-1].get("apiservers_missing", []))


def covered(row: ServerRow) -> bool:
    """Whether the SLO covers the call (sig-scalability/slos/api_call_latency.md): mutating calls on single objects
    and reads of a resource, a namespace or the cluster; not a DELETE of a collection (the load's own clean-up) nor a
    non-resource path (/readyz, /metrics), which ClusterLoader2's simple query would still hold to 1 s."""
    return row.scope in ("resource", "namespace", "cluster") and (row.verb in ("GET", "LIST") or row.scope == "resource")


def _name(row: ServerRow) -> str:
    return f"{row.verb} {row.resource}{'/' + row.subresource if row.subresource else ''} ({row.scope})"


def disagreements(history: History, rows: list[ServerRow], warmup_s: float) -> list[str]:
    """The load's calls judged differently by the two sides over the whole run: over the SLO at the client but not
    inside the apiservers (the generator, TLS or the load balancer added it), or the other way round (requests the
    client never saw answered, or other clients' calls of the same kind)."""
    found = []
    for client in latency_table(history, window_s=float("inf"), warmup_s=warmup_s):
        if client.slo_s is None or client.count == client.failed:
            continue
        same = [r for r in rows if r.verb == SERVER_VERB.get(client.verb) and r.resource == client.resource
                and r.scope == client.scope]
        if not same:
            continue
        server = max(same, key=lambda r: r.p99_s)
        if (client.p99_s > client.slo_s) != (server.p99_s > server.slo_s):
            found.append(f"{client.verb} {client.resource} ({client.scope}): client p99 {client.p99_s:.3f}s, "
                         f"server p99 {server.p99_s:.3f}s, SLO {server.slo_s:.0f}s")
    return found


@checker("server-side-latency-slo")
def server_latency_slo(history: History, *, warmup_s: float = thresholds.LOAD_WARMUP_S) -> Verdict:
    """Every call kind's p99 inside the apiservers over the load's window (every client of the cluster, as the SLI
    counts them) within its SLO: 1 s for a single object, 5 s for a namespace, 30 s for the cluster."""
    scraped = server_rows(history)
    if scraped is None:
        return Verdict("server-side-latency-slo", Status.UNKNOWN, "the apiservers' /metrics were not scraped around "
                       "the load", {})
    rows, missing = scraped
    rows = [row for row in rows if covered(row)]
    if not rows:
        return Verdict("server-side-latency-slo", Status.UNKNOWN, "no request was counted by an apiserver answering "
                       f"both scrapes (missing: {', '.join(missing) or 'none'})", {"apiservers_missing": missing})
    breaches = [r for r in rows if r.p99_s > r.slo_s]
    tightest = max(rows, key=lambda r: r.p99_s / r.slo_s)
    differing = disagreements(history, rows, warmup_s)
    figures = {"call_kinds": len(rows), "requests": sum(r.count for r in rows), "over_slo": sum(r.slow for r in rows),
               "worst_p99_s": tightest.p99_s, "worst_call": _name(tightest), "apiservers_missing": missing,
               "client_and_server_disagree": differing}
    note = (f"; not counted: {', '.join(missing)} (unanswered at a scrape)" if missing else "") + \
           (f"; the client's figure disagrees on {'; '.join(differing)}" if differing else "")
    if breaches:
        worst = ", ".join(f"{_name(r)} p99 {r.p99_s:.3f}s > {r.slo_s:.0f}s ({r.slow} of {r.count} over)"
                          for r in sorted(breaches, key=lambda r: -r.p99_s / r.slo_s)[:5])
        return Verdict("server-side-latency-slo", Status.FAIL, f"SLO breached inside the apiservers: {worst}{note}",
                       figures)
    return Verdict("server-side-latency-slo", Status.PASS,
                   f"every p99 inside the apiservers within its SLO over {len(rows)} call kinds; closest: "
                   f"{_name(tightest)} {tightest.p99_s:.3f}s of {tightest.slo_s:.0f}s{note}", figures)


def server_class(row: ServerRow) -> str:
    """The SLO class of a call as the apiservers name it (harness/objectives/catalog.py SLO_CLASSES)."""
    if row.verb == "LIST":
        return "list_cluster" if row.scope == "cluster" else "list_namespace"
    return "get" if row.verb == "GET" else "mutating"


def server_measures(history: History) -> list[Measurement]:
    """The api_p99_s objective's figures from inside the apiservers: the highest p99 of each SLO class."""
    scraped = server_rows(history)
    worst: dict[str, float] = {}
    for row in [row for row in scraped[0] if covered(row)] if scraped else []:
        worst[server_class(row)] = max(worst.get(server_class(row), 0.0), row.p99_s)
    return [Measurement("api_p99_s", round(value, 3), klass, bound=None) for klass, value in sorted(worst.items())]
