"""The server-side API latency SLI from two /metrics scrapes (harness/metrics), against figures worked by hand."""

import math

import pytest

from harness.metrics.api_responsiveness import ApiCall, between, calls, slo_for_call, table_text
from harness.metrics.prometheus_text import MetricsFormatError, histogram_quantile, histograms

BOUNDS = ("0.1", "0.5", "1", "5", "30", "+Inf")


def series(counts: tuple[int, ...], verb: str = "POST", resource: str = "configmaps", scope: str = "resource",
           subresource: str = "", group: str = "") -> str:
    """One series as an apiserver writes it: cumulative buckets, then _sum and _count."""
    labels = (f'component="apiserver",dry_run="",group="{group}",resource="{resource}",scope="{scope}",'
              f'subresource="{subresource}",verb="{verb}",version="v1"')
    lines = [f'apiserver_request_duration_seconds_bucket{{{labels},le="{b}"}} {c}' for b, c in zip(BOUNDS, counts)]
    return "\n".join([*lines, f"apiserver_request_duration_seconds_sum{{{labels}}} 1.5",
                      f"apiserver_request_duration_seconds_count{{{labels}}} {counts[-1]}"])


HEADER = ("# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds\n"
          "# TYPE apiserver_request_duration_seconds histogram\n")


def test_histogram_quantile_interpolates_inside_the_bucket_as_promql_does():
    buckets = {0.1: 50.0, 0.5: 90.0, 1.0: 100.0, math.inf: 100.0}
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.1)  # rank 50: the first bucket's top
    assert histogram_quantile(0.7, buckets) == pytest.approx(0.1 + 0.4 * 20 / 40)
    assert histogram_quantile(0.99, buckets) == pytest.approx(0.5 + 0.5 * 9 / 10)
    assert histogram_quantile(0.25, buckets) == pytest.approx(0.05)  # from 0 in the first bucket
    # beyond the highest finite bound PromQL answers that bound
    assert histogram_quantile(0.99, {1.0: 10.0, math.inf: 100.0}) == 1.0
    assert histogram_quantile(0.99, {1.0: 0.0, math.inf: 0.0}) is None


def test_labels_with_escapes_and_other_families_are_read_apart():
    text = HEADER + series((1, 2, 3, 3, 3, 3)) + "\n" + (
        'apiserver_request_duration_seconds_bucket{resource="a\\"b\\\\c",verb="GET",le="+Inf"} 7\n'
        'apiserver_request_sli_duration_seconds_bucket{resource="pods",verb="GET",le="+Inf"} 9\n')
    found = histograms(text, "apiserver_request_duration_seconds")
    assert {dict(k).get("resource") for k in found} == {"configmaps", 'a"b\\c'}
    assert found[(("resource", 'a"b\\c'), ("verb", "GET"))] == {math.inf: 7.0}


def test_a_line_that_is_not_the_text_format_is_named():
    with pytest.raises(MetricsFormatError, match="without le"):
        histograms('apiserver_request_duration_seconds_bucket{verb="GET"} 1', "apiserver_request_duration_seconds")
    with pytest.raises(MetricsFormatError, match="unreadable labels"):
        histograms('apiserver_request_duration_seconds_bucket{verb=GET,le="1"} 1', "apiserver_request_duration_seconds")


def test_clusterloader2s_exclusions_leave_out_events_and_streaming_verbs_and_groups_are_summed():
    text = "\n".join([series((1, 1, 1, 1, 1, 1), verb="WATCH"), series((1, 1, 1, 1, 1, 1), verb="CONNECT",
                      resource="pods", subresource="exec"), series((1, 1, 1, 1, 1, 1), resource="events"),
                      series((2, 2, 2, 2, 2, 2)), series((3, 3, 3, 3, 3, 3), group="other")])
    assert calls(text) == {ApiCall("configmaps", "", "POST", "resource"):
                           {0.1: 5.0, 0.5: 5.0, 1.0: 5.0, 5.0: 5.0, 30.0: 5.0, math.inf: 5.0}}


def test_the_thresholds_are_clusterloader2s_by_verb_and_scope():
    assert slo_for_call("LIST", "cluster") == 30.0 and slo_for_call("LIST", "namespace") == 5.0
    # not a LIST: 1 s whatever the scope (a DELETE of a collection in a namespace, a non-resource GET)
    assert slo_for_call("DELETE", "namespace") == slo_for_call("GET", "") == slo_for_call("POST", "resource") == 1.0


def test_the_window_sums_the_apiservers_increases_and_counts_requests_over_the_slo():
    before = {"c1": calls(series((10, 10, 10, 10, 10, 10))), "c2": calls(series((0, 0, 0, 0, 0, 0)))}
    after = {"c1": calls(series((60, 90, 97, 100, 100, 100))), "c2": calls(series((50, 80, 95, 100, 100, 100)))}
    (row,), missing = between(before, after)
    # increases: c1 50/80/87/90 of 90, c2 50/80/95/100 of 100 -> 100/160/182/190 of 190
    assert (row.verb, row.resource, row.scope, row.count, row.slo_s, missing) == ("POST", "configmaps", "resource",
                                                                                  190, 1.0, [])
    assert row.p99_s == pytest.approx(1.0 + 4.0 * (0.99 * 190 - 182) / 8, abs=1e-3)
    assert row.slow == 8  # above 1 s: 190 - 182
    assert row.p50_s == pytest.approx(0.095, abs=1e-3)
    assert "configmaps" in table_text([row])


def test_an_apiserver_that_restarted_counts_from_zero_and_one_that_did_not_answer_is_named():
    before = {"c1": calls(series((100, 100, 100, 100, 100, 100))), "c2": calls(series((5, 5, 5, 5, 5, 5)))}
    after = {"c1": calls(series((4, 4, 4, 4, 4, 4)))}
    (row,), missing = between(before, after)
    assert row.count == 4 and missing == ["c2"]
