"""API Priority and Fairness as the apiservers report it on /metrics, per priority level over a window: requests it
rejected (apiserver_flowcontrol_rejected_requests_total's increase), the seats in use at the window's end against
the level's nominal limit, and how long requests waited in its queues (the p99 of
apiserver_flowcontrol_request_wait_duration_seconds over the window). Summed over flow schemas and apiservers, as
the capacity and isolation scenarios show them beside their verdicts (docs/load.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from harness.metrics.prometheus_text import Histogram, histogram_quantile, histograms, increase, samples
from harness.metrics.scrape import each_apiserver

if TYPE_CHECKING:
    from harness.target.protocol import Target

PREFIX = "apiserver_flowcontrol_"
REJECTED = PREFIX + "rejected_requests_total"  # labels flow_schema, priority_level, reason
EXECUTING_SEATS = PREFIX + "current_executing_seats"  # a gauge: labels flow_schema, priority_level
NOMINAL_SEATS = PREFIX + "nominal_limit_seats"  # a gauge: label priority_level
WAIT = PREFIX + "request_wait_duration_seconds"  # a histogram: labels execute, flow_schema, priority_level


@dataclass(frozen=True)
class LevelSample:
    """One apiserver's figures for one priority level at one scrape."""

    rejected: float
    executing_seats: float
    nominal_seats: float
    waits: Histogram


Scrape = dict[str, dict[str, LevelSample]]  # apiserver host -> priority level -> sample


@dataclass(frozen=True)
class LevelWindow:
    """One priority level over a window, summed over the apiservers that answered both scrapes."""

    priority_level: str
    rejected: int
    executing_seats: float
    nominal_seats: float
    waited: int
    wait_p99_s: float | None

    @property
    def seats_in_use(self) -> float | None:
        """The share of the level's nominal seats in use at the window's end (None: the level has none)."""
        return self.executing_seats / self.nominal_seats if self.nominal_seats else None

    def as_dict(self) -> dict:
        return asdict(self)


def _by_level(values: dict) -> dict[str, float]:
    """A metric's samples summed per priority level (over flow schemas and reasons)."""
    summed: dict[str, float] = {}
    for labels, value in values.items():
        level = dict(labels).get("priority_level")
        if level is not None:
            summed[level] = summed.get(level, 0.0) + value
    return summed


def levels(text: str) -> dict[str, LevelSample]:
    """One apiserver's /metrics answer: each priority level's sample."""
    rejected = _by_level(samples(text, REJECTED))
    executing = _by_level(samples(text, EXECUTING_SEATS))
    nominal = _by_level(samples(text, NOMINAL_SEATS))
    waits: dict[str, Histogram] = {}
    for labels, buckets in histograms(text, WAIT).items():
        level = dict(labels).get("priority_level")
        if level is None:
            continue
        into = waits.setdefault(level, {})
        for bound, count in buckets.items():
            into[bound] = into.get(bound, 0.0) + count
    return {level: LevelSample(rejected.get(level, 0.0), executing.get(level, 0.0), nominal.get(level, 0.0),
                               waits.get(level, {}))
            for level in sorted(set(rejected) | set(executing) | set(nominal) | set(waits))}


def scrape(cluster: Target, timeout_s: float = 15.0) -> Scrape:
    """Every controller's apiserver asked directly; one that does not answer is left out of this scrape."""
    return each_apiserver(cluster, levels, timeout_s)


def between(before: Scrape, after: Scrape) -> tuple[list[LevelWindow], list[str]]:
    """Each priority level over the window between two scrapes, and the apiservers missing from either. A counter
    that went down means its apiserver restarted: its count since the start."""
    missing = sorted(set(before) ^ set(after))
    rejected: dict[str, float] = {}
    executing: dict[str, float] = {}
    nominal: dict[str, float] = {}
    waits: dict[str, Histogram] = {}
    for host in sorted(set(before) & set(after)):
        for level, now in after[host].items():
            then = before[host].get(level, LevelSample(0.0, 0.0, 0.0, {}))
            grew = now.rejected - then.rejected
            rejected[level] = rejected.get(level, 0.0) + (grew if grew >= 0 else now.rejected)
            executing[level] = executing.get(level, 0.0) + now.executing_seats
            nominal[level] = nominal.get(level, 0.0) + now.nominal_seats
            into = waits.setdefault(level, {})
            for bound, count in increase(then.waits, now.waits).items():
                into[bound] = into.get(bound, 0.0) + count
    rows = [LevelWindow(level, round(rejected[level]), executing[level], nominal[level],
                        round(waits[level].get(float("inf"), 0.0)), histogram_quantile(0.99, waits[level]))
            for level in sorted(rejected)]
    return rows, missing
