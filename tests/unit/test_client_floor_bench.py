"""bench/client_floor.py's pure parts (its Python clients' parser and request are harness/load/plain_http.py's,
tests/unit/test_plain_http.py): what it reads from wrk and locust, and the ratio it writes for issue #25's goal
(requests per CPU second against wrk's with as many connections)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from client_floor import Run, locust_requests, rows, wrk_requests  # noqa: E402


def test_wrk_counts_only_a_clean_run():
    clean = "Running 5s test @ https://127.0.0.1:1/readyz\n  93887 requests in 5.00s, 7.61MB read\nRequests/sec: 18777"
    assert wrk_requests(clean) == 93887
    with pytest.raises(RuntimeError):
        wrk_requests(clean + "\n  Non-2xx or 3xx responses: 12")
    with pytest.raises(RuntimeError):
        wrk_requests("unable to connect to 127.0.0.1:1 Connection refused")


def test_locust_counts_the_aggregated_row_and_refuses_failed_requests(tmp_path):
    header = "Type,Name,Request Count,Failure Count\n"
    (tmp_path / "ok.csv").write_text(header + "GET,/readyz,11818,0\n,Aggregated,11818,0\n")
    (tmp_path / "bad.csv").write_text(header + "GET,/readyz,11818,3\n,Aggregated,11818,3\n")
    assert locust_requests(tmp_path / "ok.csv") == 11818
    with pytest.raises(RuntimeError):
        locust_requests(tmp_path / "bad.csv")


def test_each_client_is_compared_with_wrk_on_as_many_connections():
    table = rows([Run("wrk", 1, 40000, 1.0), Run("wrk", 20, 50000, 1.0), Run("python", 1, 20000, 1.0),
                  Run("locust", 20, 5000, 2.0), Run("other", 5, 100, 1.0)])
    ratios = {(row["client"], row["connections"]): row["ratio_to_wrk"] for row in table}
    assert ratios == {("wrk", 1): 1.0, ("wrk", 20): 1.0, ("python", 1): 0.5, ("locust", 20): 0.05, ("other", 5): ""}
    assert table[3]["requests_per_cpu_s"] == 2500 and table[3]["us_per_request"] == 400.0
