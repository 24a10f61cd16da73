"""etcd's figures over a load's window from two /metrics scrapes per member, against figures worked by hand."""

import pytest

from harness.metrics.etcd_window import between, summary, table_text
from harness.metrics.prometheus_text import MetricsFormatError, counter_total

BOUNDS = ("0.001", "0.002", "0.004", "0.008", "+Inf")


def metrics(wal: tuple[int, ...], commit: tuple[int, ...], leader_changes: int, failed: int) -> str:
    lines = [f'etcd_disk_wal_fsync_duration_seconds_bucket{{le="{b}"}} {c}' for b, c in zip(BOUNDS, wal)]
    lines += [f'etcd_disk_backend_commit_duration_seconds_bucket{{le="{b}"}} {c}' for b, c in zip(BOUNDS, commit)]
    lines += ["# TYPE etcd_server_leader_changes_seen_total counter", f"etcd_server_leader_changes_seen_total {leader_changes}",
              f"etcd_server_proposals_failed_total {failed}", "etcd_server_proposals_failed_total_created 1.7e9"]
    return "\n".join(lines)


def test_each_members_window_is_the_increase_between_the_scrapes():
    before = {"https://m1:2379": metrics((10, 10, 10, 10, 10), (5, 5, 5, 5, 5), 1, 0),
              "https://m2:2379": metrics((0, 0, 0, 0, 0), (0, 0, 0, 0, 0), 1, 0)}
    after = {"https://m1:2379": metrics((60, 90, 100, 110, 110), (55, 55, 55, 55, 55), 2, 3)}
    (row,), missing = between(before, after)
    assert missing == ["https://m2:2379"]
    # wal increases 50/80/90/100 of 100: rank 99 lies in (0.004, 0.008], 9 of 10 in
    assert row.wal_fsync_p99_s == pytest.approx(0.004 + 0.004 * 9 / 10, abs=1e-4)
    assert row.backend_commit_p99_s == pytest.approx(0.001 * 0.99, abs=1e-4) and (row.leader_changes,
                                                                                  row.proposals_failed) == (1, 3)
    assert summary([row])["etcd_proposals_failed"] == 3 and "m1" in table_text([row])


def test_a_restarted_member_counts_from_its_start_and_no_write_leaves_no_p99():
    before = {"m": metrics((100, 100, 100, 100, 100), (0, 0, 0, 0, 0), 5, 2)}
    after = {"m": metrics((1, 1, 1, 1, 1), (0, 0, 0, 0, 0), 1, 0)}
    (row,), _ = between(before, after)
    assert row.wal_fsync_p99_s == pytest.approx(0.00099, abs=1e-4)
    assert row.backend_commit_p99_s is None and (row.leader_changes, row.proposals_failed) == (1, 0)


def test_a_counter_sums_its_labelled_samples_and_a_bad_line_is_named():
    text = 'x_total{a="1"} 2\nx_total{a="2"} 3.5\nx_total_created 9\n'
    assert counter_total(text, "x_total") == 5.5 and counter_total(text, "y_total") is None
    with pytest.raises(MetricsFormatError, match="without a value"):
        counter_total('x_total{a="1"}\n', "x_total")
