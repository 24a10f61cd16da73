"""API Priority and Fairness per priority level from two scrapes of /metrics (harness/metrics/flowcontrol.py), on
text in the format kube-apiserver serves it (the metric and label names are those of kube-apiserver v1.34)."""

import math

import pytest

from harness.metrics.flowcontrol import between, levels
from harness.metrics.prometheus_text import MetricsFormatError, samples


def metrics(*, rejected_low: float, rejected_leader: float = 0.0, waits_low: tuple[float, float, float],
            executing_low: float = 3.0) -> str:
    """waits_low: the workload-low level's cumulative wait counts at le 0.1, le 1 and +Inf (over both flow
    schemas' halves: the first schema holds all of them)."""
    le_01, le_1, total = waits_low
    return f"""# HELP apiserver_flowcontrol_rejected_requests_total [BETA] Number of requests rejected by API Priority and Fairness subsystem
# TYPE apiserver_flowcontrol_rejected_requests_total counter
apiserver_flowcontrol_rejected_requests_total{{flow_schema="service-accounts",priority_level="workload-low",reason="queue-full"}} {rejected_low}
apiserver_flowcontrol_rejected_requests_total{{flow_schema="leader-election",priority_level="leader-election",reason="time-out"}} {rejected_leader}
# TYPE apiserver_flowcontrol_current_executing_seats gauge
apiserver_flowcontrol_current_executing_seats{{flow_schema="service-accounts",priority_level="workload-low"}} {executing_low}
apiserver_flowcontrol_current_executing_seats{{flow_schema="global-default",priority_level="workload-low"}} 1
apiserver_flowcontrol_current_executing_seats{{flow_schema="leader-election",priority_level="leader-election"}} 0
# TYPE apiserver_flowcontrol_nominal_limit_seats gauge
apiserver_flowcontrol_nominal_limit_seats{{priority_level="workload-low"}} 24
apiserver_flowcontrol_nominal_limit_seats{{priority_level="leader-election"}} 25
apiserver_flowcontrol_nominal_limit_seats{{priority_level="exempt"}} 0
# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute="true",flow_schema="service-accounts",priority_level="workload-low",le="0.1"}} {le_01}
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute="true",flow_schema="service-accounts",priority_level="workload-low",le="1"}} {le_1}
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute="true",flow_schema="service-accounts",priority_level="workload-low",le="+Inf"}} {total}
apiserver_flowcontrol_request_wait_duration_seconds_sum{{execute="true",flow_schema="service-accounts",priority_level="workload-low"}} 1.5
apiserver_flowcontrol_request_wait_duration_seconds_count{{execute="true",flow_schema="service-accounts",priority_level="workload-low"}} {total}
apiserver_flowcontrol_rejected_requests_total_other 99
"""


def test_a_levels_rejections_seats_and_queue_wait_over_a_window_summed_over_two_apiservers():
    before = {"c1": levels(metrics(rejected_low=5, waits_low=(10, 10, 10))),
              "c2": levels(metrics(rejected_low=0, waits_low=(0, 0, 0)))}
    after = {"c1": levels(metrics(rejected_low=12, waits_low=(10, 110, 110))),
             "c2": levels(metrics(rejected_low=3, waits_low=(0, 0, 0), executing_low=19))}
    rows, missing = between(before, after)
    low = next(row for row in rows if row.priority_level == "workload-low")
    assert missing == []
    assert low.rejected == 10  # 7 on c1, 3 on c2
    assert (low.executing_seats, low.nominal_seats) == (3 + 1 + 19 + 1, 48)
    assert low.seats_in_use == pytest.approx(24 / 48)
    assert low.waited == 100 and 0.1 < low.wait_p99_s <= 1.0  # the window's 100 waits all fell in (0.1, 1]
    leader = next(row for row in rows if row.priority_level == "leader-election")
    assert (leader.rejected, leader.waited, leader.wait_p99_s) == (0, 0, None)
    assert next(row for row in rows if row.priority_level == "exempt").seats_in_use is None


def test_a_restarted_apiserver_counts_from_its_start_and_a_silent_one_is_named():
    before = {"c1": levels(metrics(rejected_low=50, waits_low=(40, 40, 40))),
              "c3": levels(metrics(rejected_low=0, waits_low=(0, 0, 0)))}
    after = {"c1": levels(metrics(rejected_low=4, waits_low=(2, 2, 2)))}
    rows, missing = between(before, after)
    low = next(row for row in rows if row.priority_level == "workload-low")
    assert missing == ["c3"] and low.rejected == 4 and low.waited == 2


def test_samples_reads_labels_and_unlabelled_lines_and_refuses_a_line_without_a_value():
    text = 'up 1\nx_total{a="1",b="two \\"q\\""} 3.5\nx_total_other 9\n'
    assert samples(text, "up") == {(): 1.0}
    assert samples(text, "x_total") == {(("a", "1"), ("b", 'two "q"')): 3.5}
    assert samples("x_total{a=\"1\"} +Inf\n", "x_total")[(("a", "1"),)] == math.inf
    with pytest.raises(MetricsFormatError, match="without a value"):
        samples('x_total{a="1"}\n', "x_total")
