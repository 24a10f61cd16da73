"""bench/load.py rps's table: what it reads from nstat and vegeta's report, and the ratios it writes for issue #25's
goal (requests per CPU second of a generator against wrk's)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from load_rps import Measured, parse_nstat, rows, vegeta_rate  # noqa: E402

NSTAT = "#kernel\nTcpActiveOpens                  48211              0.0\n"
WRK = "wrk (1 thread, 20 connections, anonymous)"
LOCUST = "locust (1 process, FastHttpUser, 20 users, anonymous)"


def test_nstat_counter_is_read_and_a_missing_one_is_an_error():
    assert parse_nstat(NSTAT, "TcpActiveOpens") == 48211
    with pytest.raises(ValueError, match="TcpPassiveOpens"):
        parse_nstat(NSTAT, "TcpPassiveOpens")


def test_vegeta_rate_is_taken_only_when_every_request_succeeded():
    assert vegeta_rate({"requests": 9000, "rate": 450.2, "success": 1.0}) == 450.2
    with pytest.raises(RuntimeError, match="x509"):
        vegeta_rate({"requests": 9000, "rate": 450.2, "success": 0.0, "status_codes": {"0": 9000},
                     "errors": ["x509: certificate signed by unknown authority"]})
    with pytest.raises(RuntimeError):
        vegeta_rate({"requests": 0, "rate": 0.0, "success": 0.0})


def test_the_ratio_rows_compare_requests_per_cpu_second_with_wrks():
    measured = {LOCUST: Measured(1400.0, 8.0, 20, 0.4, 0.5), WRK: Measured(3600.0, 2.0, 20, 0.09, 0.0)}
    table = rows(measured, 20.0, WRK)
    assert [r["tool"] for r in table] == [LOCUST, WRK, "ratio locust anonymous / wrk"]
    assert table[0]["rps_per_core"] == 3500 and table[1]["rps_per_core"] == 36000
    assert table[2]["rps"] == round(1400 / 3600, 3)
    assert table[2]["rps_per_core"] == round(3500 / 36000, 3)


def test_rounds_are_combined_as_all_requests_over_all_cpu_seconds():
    from load_rps import combined

    both = combined([Measured(1000.0, 2.0, 20, 0.1, 0.2), Measured(3000.0, 4.0, 21, 0.3, 0.4)])
    assert both.requests_per_s == 2000.0 and both.cpu_s == 3.0 and both.tcp_opens == 20
    assert both.requests_per_s * 30 / both.cpu_s == (1000 * 30 + 3000 * 30) / (2.0 + 4.0)
    with pytest.raises(ValueError):
        combined([])
