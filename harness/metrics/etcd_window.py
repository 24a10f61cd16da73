"""etcd's own figures over a load's window, from every member's /metrics scraped before and after it: what explains a
latency SLO that failed (docs/load.md). Per member: the p99 of WAL fsync and of backend commit (etcd's disk; its
tuning guide holds a WAL fsync p99 under 10 ms to be healthy), the leader changes it saw and the proposals that
failed. Shown beside the verdicts, not judged."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from harness.metrics.prometheus_text import Histogram, counter_total, histogram_quantile, histograms, increase

if TYPE_CHECKING:
    from harness.target.protocol import Target

WAL_FSYNC = "etcd_disk_wal_fsync_duration_seconds"
BACKEND_COMMIT = "etcd_disk_backend_commit_duration_seconds"
LEADER_CHANGES = "etcd_server_leader_changes_seen_total"
PROPOSALS_FAILED = "etcd_server_proposals_failed_total"

Scrape = dict[str, str]  # member URL -> its /metrics answer
EVENT = "etcd-window"  # recorded with the server-side latency, once the load stopped (scenarios/load/conftest.py)


@dataclass(frozen=True)
class MemberWindow:
    member: str
    wal_fsync_p99_s: float | None
    backend_commit_p99_s: float | None
    leader_changes: int
    proposals_failed: int

    def as_dict(self) -> dict:
        return asdict(self)


def scrape(cluster: Target) -> Scrape:
    """Every member that answers (one that does not is left out: `between` names it)."""
    return {url: text for url in cluster.etcd_urls if (text := cluster.etcd.metrics(url)) is not None}


def _summed(text: str, family: str) -> Histogram:
    total: Histogram = {}
    for buckets in histograms(text, family).values():
        for bound, count in buckets.items():
            total[bound] = total.get(bound, 0.0) + count
    return total


def _counted(before: str, after: str, name: str) -> int:
    first, last = counter_total(before, name) or 0.0, counter_total(after, name) or 0.0
    return round(last - first if last >= first else last)


def between(before: Scrape, after: Scrape) -> tuple[list[MemberWindow], list[str]]:
    """Each member's window, and the members missing from either scrape."""
    rows = []
    for url in sorted(set(before) & set(after)):
        wal = increase(_summed(before[url], WAL_FSYNC), _summed(after[url], WAL_FSYNC))
        commit = increase(_summed(before[url], BACKEND_COMMIT), _summed(after[url], BACKEND_COMMIT))
        p99 = [histogram_quantile(0.99, buckets) for buckets in (wal, commit)]
        rows.append(MemberWindow(url, *(None if v is None else round(v, 4) for v in p99),
                                 _counted(before[url], after[url], LEADER_CHANGES),
                                 _counted(before[url], after[url], PROPOSALS_FAILED)))
    return rows, sorted(set(before) ^ set(after))


def table_text(rows: list[MemberWindow]) -> str:
    lines = ["etcd over the same window (each member's /metrics)",
             "member                         wal fsync p99(s)  backend commit p99(s)  leader changes  proposals failed"]
    for r in rows:
        wal = "-" if r.wal_fsync_p99_s is None else f"{r.wal_fsync_p99_s:.4f}"
        commit = "-" if r.backend_commit_p99_s is None else f"{r.backend_commit_p99_s:.4f}"
        lines.append(f"{r.member:<30} {wal:>16}  {commit:>21}  {r.leader_changes:>14}  {r.proposals_failed:>16}")
    return "\n".join(lines)


def summary(rows: list[MemberWindow]) -> dict:
    """The figures a verdict shows beside it: the worst member's p99s and the totals."""
    def worst(values: list[float | None]) -> float | None:
        return max((v for v in values if v is not None), default=None)

    return {"etcd_wal_fsync_p99_s": worst([r.wal_fsync_p99_s for r in rows]),
            "etcd_backend_commit_p99_s": worst([r.backend_commit_p99_s for r in rows]),
            "etcd_leader_changes": sum(r.leader_changes for r in rows),
            "etcd_proposals_failed": sum(r.proposals_failed for r in rows)}
