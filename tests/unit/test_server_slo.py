"""The API latency SLO judged on the apiservers' own figures (the server-side-latency event), with the load's client
figure beside it: hand-made Histories."""

from harness.checkers import Status
from harness.checkers.server_slo import EVENT, server_latency_slo
from harness.history import History, Outcome


def row(verb, resource, scope, p99, count=100, slo=1.0, subresource=""):
    return {"resource": resource, "subresource": subresource, "verb": verb, "scope": scope, "count": count,
            "p50_s": p99 / 4, "p90_s": p99 / 2, "p99_s": p99, "slo_s": slo, "slow": count // 100 if p99 > slo else 0}


def request(history, t, latency, verb="get", resource="nodes", scope="resource"):
    history.record("load-0", f"load.{verb}", resource, t, Outcome.OK, complete=t + latency, scope=scope, status=200)


def test_a_call_over_its_slo_inside_the_apiservers_fails_and_is_named():
    h = History()
    h.event(EVENT, rows=[row("PUT", "leases", "resource", 0.04, count=6000),
                         row("POST", "configmaps", "resource", 1.8),
                         row("LIST", "nodes", "cluster", 12.0, slo=30.0)], apiservers_missing=[])
    verdict = server_latency_slo(h)
    assert verdict.status is Status.FAIL
    assert "POST configmaps (resource) p99 1.800s > 1s" in verdict.explanation and "leases" not in verdict.explanation
    assert verdict.figures["worst_call"] == "POST configmaps (resource)" and verdict.figures["requests"] == 6200


def test_within_every_slo_passes_naming_the_closest_and_an_apiserver_left_out():
    h = History()
    h.event(EVENT, rows=[row("GET", "nodes", "resource", 0.2), row("LIST", "pods", "namespace", 4.0, slo=5.0)],
            apiservers_missing=["c2"])
    verdict = server_latency_slo(h)
    assert verdict.passed and "closest: LIST pods (namespace) 4.000s of 5s" in verdict.explanation
    assert "not counted: c2" in verdict.explanation


def test_without_a_scrape_or_a_counted_request_nothing_is_judged():
    assert server_latency_slo(History()).status is Status.UNKNOWN
    h = History()
    h.event(EVENT, rows=[], apiservers_missing=["c1", "c2", "c3"])
    assert server_latency_slo(h).status is Status.UNKNOWN


def test_a_call_slow_only_at_the_client_is_flagged_not_failed():
    h = History()
    h.event(EVENT, rows=[row("GET", "nodes", "resource", 0.05), row("PATCH", "nodes", "resource", 0.05,
                                                                   subresource="status")], apiservers_missing=[])
    for i in range(100):  # the load's gets of nodes, 1.5 s at the client (a starved generator): p99 over 1 s
        request(h, 10.0 + i, 1.5 if i % 10 == 0 else 0.02)
        request(h, 10.5 + i, 0.03, verb="patch")
    verdict = server_latency_slo(h, warmup_s=0.0)
    assert verdict.passed, verdict.explanation
    assert verdict.figures["client_and_server_disagree"] == [
        "get nodes (resource): client p99 1.500s, server p99 0.050s, SLO 1s"]
    assert "the client's figure disagrees on get nodes" in verdict.explanation


def test_calls_the_slo_does_not_cover_are_not_judged():
    h = History()
    h.event(EVENT, rows=[row("DELETE", "pods", "namespace", 1.4), row("GET", "", "", 2.0),  # a collection, /metrics
                         row("GET", "nodes", "resource", 0.1)], apiservers_missing=[])
    verdict = server_latency_slo(h)
    assert verdict.passed and verdict.figures["call_kinds"] == 1, verdict.explanation
