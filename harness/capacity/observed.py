"""What one step of a rising load observed, turned into a step's record (steps.py): the generator's requests by SLO
class from the History, the p99 of each class and the nodes' Lease renewals from the apiservers' own histograms,
priority and fairness's rejections and seats from its metrics, the generator's processes' CPU from /proc.
Pure: the scraping and the load are stepping.py's."""

from __future__ import annotations

from dataclasses import dataclass

from harness.checkers.server_slo import covered, server_class
from harness.history import Op
from harness.metrics.api_responsiveness import ServerRow
from harness.metrics.flowcontrol import LevelWindow

MUTATING_VERBS = {"create", "update", "delete", "patch", "mutate"}  # the load's records (harness/load/users.py)
RENEWAL_VERBS = {"PUT", "PATCH"}  # a kubelet renews its node Lease with an update


def class_of_op(op: Op) -> str | None:
    """The SLO class of one of the generator's requests (f="load.<verb>", its scope in extra); None for a watch and
    for the health reads no SLO covers."""
    verb, scope = op.f.removeprefix("load."), op.extra.get("scope")
    if verb in MUTATING_VERBS and scope == "resource":
        return "mutating"
    if verb == "get" and scope == "resource":
        return "get"
    if verb == "list" and scope in ("namespace", "cluster"):
        return f"list_{scope}"
    return None


@dataclass(frozen=True)
class GeneratorWindow:
    """The generator's requests of one step: answered per second by SLO class (any HTTP status: the cluster
    answered), and how many there were and failed (an error or no answer)."""

    answered_rps: dict[str, float]
    requests: int
    failed: int


def generator_window(ops: list[Op], since: float, until: float) -> GeneratorWindow:
    """The generator's requests started in [since, until), over that window's length."""
    seconds = until - since
    if seconds <= 0:
        raise ValueError(f"a step's window must have a length, not {seconds:g} s")
    answered: dict[str, int] = {}
    requests = failed = 0
    for op in ops:
        if not op.f.startswith("load.") or not since <= op.invoke < until:
            continue
        requests += 1
        status = op.extra.get("status") or 0
        if not op.ok:
            failed += 1
        klass = class_of_op(op)
        if klass is not None and status:
            answered[klass] = answered.get(klass, 0) + 1
    return GeneratorWindow({klass: round(count / seconds, 3) for klass, count in sorted(answered.items())},
                           requests, failed)


def p99_by_class(rows: list[ServerRow]) -> dict[str, float]:
    """The highest p99 of each SLO class inside the apiservers over the window (the calls the SLO covers)."""
    worst: dict[str, float] = {}
    for row in rows:
        if covered(row):
            worst[server_class(row)] = max(worst.get(server_class(row), 0.0), row.p99_s)
    return worst


def lease_renewals_rps(rows: list[ServerRow], seconds: float) -> float:
    """Lease updates per second the apiservers served over the window: the nodes' heartbeats (and the few of the
    controllers' leader election), which the expected load counts among the mutating requests."""
    renewals = sum(row.count for row in rows if row.resource == "leases" and row.verb in RENEWAL_VERBS)
    return round(renewals / seconds, 3) if seconds > 0 else 0.0


def seats_in_use(levels: list[LevelWindow]) -> dict[str, float]:
    """Each priority level's share of its nominal seats in use, as "seats <level>" (levels without seats left out)."""
    return {f"seats {level.priority_level}": round(level.seats_in_use, 3) for level in levels
            if level.seats_in_use is not None}


def machine_busy_pct(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The share of the machine's cores that were busy between two readings of (busy, all) clock ticks summed over
    its cores (/proc/stat's first line); None when no tick passed."""
    busy, total = after[0] - before[0], after[1] - before[1]
    return round(100.0 * busy / total, 1) if total > 0 else None


def busiest_pct(before: dict[int, float], after: dict[int, float], wall_s: float) -> float | None:
    """The busiest of the generator's processes between two readings of their CPU seconds (pid -> seconds), as a
    share of the one core each can use: a locust process is single-threaded, so one at its core is the generator's
    limit however idle the others are. None when no process was read both times."""
    both = [after[pid] - before[pid] for pid in before if pid in after]
    if wall_s <= 0 or not both:
        return None
    return round(100.0 * max(both) / wall_s, 1)
