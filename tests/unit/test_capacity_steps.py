"""A capacity step's observations turned into its record (harness/capacity/observed.py) and the climb's plan and
load (harness/capacity/stepping.py), on recorded operations and metric rows."""

import pytest

from harness.capacity.knee import KneeLimits
from harness.capacity.observed import (busiest_pct, class_of_op, generator_window, lease_renewals_rps,
                                       machine_busy_pct, p99_by_class, seats_in_use)
from harness.capacity.stepping import Climb, step_spec
from harness.history import Op, Outcome
from harness.load.spec import CHURN_LIMIT_PER_S, parse_spec
from harness.metrics.api_responsiveness import ServerRow
from harness.metrics.flowcontrol import LevelWindow

LIMITS = KneeLimits({"get": 1.0}, 0.5, 10.0, 80.0)


def op(verb: str, scope: str, at: float, *, ok: bool = True, status: int = 200) -> Op:
    return Op("load-0", f"load.{verb}", "pods", at, at + 0.01, Outcome.OK if ok else Outcome.FAIL,
              extra={"scope": scope, "status": status})


def row(verb: str, scope: str, p99: float, *, resource: str = "pods", count: int = 10) -> ServerRow:
    return ServerRow(resource, "", verb, scope, count, p99 / 2, p99, p99, 1.0, 0)


def test_each_request_of_the_load_is_counted_in_its_slo_class_and_watches_and_health_reads_in_none():
    assert [class_of_op(op(v, s, 0)) for v, s in (("create", "resource"), ("patch", "resource"), ("get", "resource"),
                                                  ("list", "namespace"), ("list", "cluster"), ("watch", "cluster"),
                                                  ("get", "health"))] == \
        ["mutating", "mutating", "get", "list_namespace", "list_cluster", None, None]


def test_a_steps_window_counts_what_was_answered_per_second_and_what_failed_within_it_only():
    ops = [op("get", "resource", 10.0 + i / 10) for i in range(20)]  # 20 gets over 2 s
    ops += [op("create", "resource", 11.0, ok=False, status=429), op("create", "resource", 11.5, ok=False, status=0)]
    ops += [op("get", "resource", 9.0), op("get", "resource", 12.0)]  # before and at the window's end: not counted
    window = generator_window(ops, 10.0, 12.0)
    assert window.answered_rps == {"get": 10.0, "mutating": 0.5}  # the 429 was answered, the timeout was not
    assert (window.requests, window.failed) == (22, 2)
    with pytest.raises(ValueError, match="must have a length"):
        generator_window(ops, 12.0, 12.0)


def test_the_apiservers_rows_give_the_worst_p99_per_class_and_the_lease_renewals_per_second():
    rows = [row("GET", "resource", 0.2), row("GET", "resource", 0.4, resource="nodes"), row("LIST", "cluster", 3.0),
            row("GET", "health", 9.0, resource=""), row("PUT", "resource", 0.05, resource="leases", count=1000),
            row("PATCH", "resource", 0.05, resource="leases", count=200)]
    assert p99_by_class(rows) == {"get": 0.4, "list_cluster": 3.0, "mutating": 0.05}
    assert lease_renewals_rps(rows, 12.0) == 100.0 and lease_renewals_rps(rows, 0.0) == 0.0


def test_seats_in_use_and_the_generators_share_of_its_cores():
    levels = [LevelWindow("workload-low", 0, 6.0, 24.0, 10, 0.1), LevelWindow("exempt", 0, 3.0, 0.0, 0, None)]
    assert seats_in_use(levels) == {"seats workload-low": 0.25}
    before, after = {10: 1.0, 11: 2.0, 12: 0.5}, {10: 9.0, 11: 4.0}  # 12 exited: not read twice
    assert busiest_pct(before, after, 10.0) == 80.0
    assert busiest_pct(before, {}, 10.0) is None and busiest_pct(before, after, 0.0) is None
    # (busy, all) ticks over the machine's cores: 150 of 200 busy, and no tick at all
    assert machine_busy_pct((1000, 4000), (1150, 4200)) == 75.0 and machine_busy_pct((5, 9), (5, 9)) is None


def test_a_climb_rises_and_each_steps_load_has_users_enough_and_allows_its_own_churn():
    with pytest.raises(ValueError, match="must rise"):
        Climb((10.0, 10.0), 20.0, LIMITS)
    with pytest.raises(ValueError, match="must last"):
        Climb((10.0,), 0.0, LIMITS)
    base = parse_spec({"endpoint": "https://127.0.0.1:6443", "ca": "/ca", "cert": "/c", "key": "/k", "nodes": ["n1"],
                       "users": 10, "rate_per_s": 20.0})
    low, high = step_spec(base, 20.0, 15.0), step_spec(base, 400.0, 15.0)
    assert (low.users, low.duration_s, low.churn_limit_per_s) == (80, 15.0, CHURN_LIMIT_PER_S)
    assert high.users == 1000 and high.churn_per_s > CHURN_LIMIT_PER_S >= 0 and high.churn_limit_per_s >= high.churn_per_s
    parse_spec(high.model_dump(mode="json"))  # what a worker process reads back
