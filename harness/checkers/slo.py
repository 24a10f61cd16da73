"""API latency SLOs over windows, the load's error rate, and the hollow nodes' heartbeat health."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from harness import thresholds
from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History, Op
from harness.objectives.measurement import Measurement

MUTATING = {"create", "update", "patch", "delete"}
LOAD_PREFIX = "load."


@dataclass(frozen=True)
class Row:
    """One (verb, resource, scope): its requests and latency percentiles over the judged part of the run."""

    verb: str
    resource: str
    scope: str
    count: int
    failed: int
    p50_s: float
    p90_s: float
    p99_s: float
    max_s: float
    worst_window_p99_s: float
    slo_s: float | None  # None: not covered by an SLO (watches are streaming)


def slo_for(verb: str, scope: str) -> float | None:
    if verb in MUTATING:
        return thresholds.SLO_MUTATING_S
    if verb == "get":
        return thresholds.SLO_GET_S
    if verb == "list":
        return thresholds.SLO_LIST_NAMESPACE_S if scope == "namespace" else thresholds.SLO_LIST_CLUSTER_S
    return None


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (what ClusterLoader2 reports): the smallest value >= q of the samples."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def load_ops(history: History, exclude: list[tuple[float, float]] = (), warmup_s: float = 0.0) -> list[Op]:
    """The load's requests, without those that overlap an excluded window (a request in flight when a fault
    starts belongs to the fault, even if it was sent just before) and without each load process's first
    `warmup_s` (counted from that process's own first request: the processes start seconds apart)."""
    ops = [o for o in history.ops if o.f.startswith(LOAD_PREFIX)]
    first: dict[str, float] = {}
    for op in ops:
        first[op.process] = min(op.invoke, first.get(op.process, op.invoke))
    return [o for o in ops if o.invoke >= first[o.process] + warmup_s
            and not any(o.invoke <= end and o.complete >= start for start, end in exclude)]


def latency_table(history: History, window_s: float, exclude: list[tuple[float, float]] = (),
                  warmup_s: float = 0.0) -> list[Row]:
    ops = load_ops(history, exclude, warmup_s)
    if not ops:
        return []
    t0 = min(o.invoke for o in ops)
    groups: dict[tuple[str, str, str], list[Op]] = defaultdict(list)
    for op in ops:
        groups[(op.f.removeprefix(LOAD_PREFIX), op.target, str(op.extra.get("scope", "")))].append(op)
    rows = []
    for (verb, resource, scope), members in sorted(groups.items()):
        ok = [o.latency for o in members if o.ok]
        windows: dict[int, list[float]] = defaultdict(list)
        for o in members:
            if o.ok:
                windows[int((o.invoke - t0) // window_s)].append(o.latency)
        worst = max((percentile(v, 0.99) for v in windows.values()), default=0.0)
        rows.append(Row(verb, resource, scope, len(members), len(members) - len(ok),
                        percentile(ok, 0.5) if ok else 0.0, percentile(ok, 0.9) if ok else 0.0,
                        percentile(ok, 0.99) if ok else 0.0, max(ok, default=0.0), worst, slo_for(verb, scope)))
    return rows


def table_text(rows: list[Row], window_s: float) -> str:
    lines = [f"p99 judged per {window_s:.0f} s window (the SLOs define 5-minute windows)",
             "verb     resource    scope      count  failed  p50(s)  p90(s)  p99(s)  max(s)  worst-window p99(s)  SLO(s)"]
    for r in rows:
        lines.append(f"{r.verb:<8} {r.resource:<11} {r.scope:<10} {r.count:>5}  {r.failed:>6}  {r.p50_s:>6.3f}  "
                     f"{r.p90_s:>6.3f}  {r.p99_s:>6.3f}  {r.max_s:>6.3f}  {r.worst_window_p99_s:>19.3f}  "
                     f"{'-' if r.slo_s is None else f'{r.slo_s:.0f}':>6}")
    return "\n".join(lines)


@checker("api-latency-slo")
def latency_slo(history: History, *, window_s: float = thresholds.SLO_WINDOW_S,
                exclude: list[tuple[float, float]] = (), warmup_s: float = thresholds.LOAD_WARMUP_S) -> Verdict:
    """p99 latency of every (verb, resource, scope) in every window against its SLO, after each load
    process's warm-up (its users' connection set-up, which the server-side SLI does not include)."""
    rows = latency_table(history, window_s, exclude, warmup_s)
    judged = [r for r in rows if r.slo_s is not None and r.count - r.failed > 0]
    if not judged:
        return Verdict("api-latency-slo", Status.UNKNOWN, "no successful load requests to judge", {"requests": 0})
    breaches = [r for r in judged if r.worst_window_p99_s > r.slo_s]
    figures = {f"p99_{r.verb}_{r.resource}_{r.scope}_s": round(r.worst_window_p99_s, 3) for r in judged}
    figures |= {"window_s": window_s, "requests": sum(r.count for r in rows)}
    if exclude:
        figures["excluded_s"] = round(sum(end - start for start, end in exclude), 1)
    figures["warmup_s_per_load_process"] = warmup_s
    if breaches:
        worst = ", ".join(f"{r.verb} {r.resource} ({r.scope}) p99 {r.worst_window_p99_s:.3f}s > {r.slo_s:.0f}s"
                          for r in breaches)
        return Verdict("api-latency-slo", Status.FAIL, f"SLO breached in a {window_s:.0f} s window: {worst}", figures)
    tightest = max(judged, key=lambda r: r.worst_window_p99_s / r.slo_s)
    return Verdict("api-latency-slo", Status.PASS,
                   f"every p99 within its SLO in {window_s:.0f} s windows over {len(judged)} call kinds; closest: "
                   f"{tightest.verb} {tightest.resource} ({tightest.scope}) {tightest.worst_window_p99_s:.3f}s of "
                   f"{tightest.slo_s:.0f}s", figures)


@checker("load-error-rate")
def error_rate(history: History, *, max_rate: float = thresholds.LOAD_ERROR_RATE_MAX,
               exclude: list[tuple[float, float]] = ()) -> Verdict:
    ops = load_ops(history, exclude)
    if not ops:
        return Verdict("load-error-rate", Status.UNKNOWN, "no load requests were recorded", {"requests": 0})
    failed = [o for o in ops if not o.ok]
    rate = len(failed) / len(ops)
    figures = {"requests": len(ops), "failed": len(failed), "error_rate_pct": round(100 * rate, 3)}
    kinds = defaultdict(int)
    for o in failed:
        kinds[f"{o.f.removeprefix(LOAD_PREFIX)} {o.target}: {o.extra.get('status') or o.error[:60]}"] += 1
    detail = "; ".join(f"{k} x{n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:5])
    text = f"{len(failed)}/{len(ops)} load requests failed ({100 * rate:.2f}%, budget {100 * max_rate:.2f}%)"
    if rate > max_rate:
        return Verdict("load-error-rate", Status.FAIL, f"{text}: {detail}", figures)
    return Verdict("load-error-rate", Status.PASS, text + (f": {detail}" if detail else ""), figures)


@checker("node-heartbeats")
def heartbeat_health(history: History, *, expected: int) -> Verdict:
    """Every sample found all hollow nodes present and Ready, and the node lifecycle controller declared
    none NotReady in between (its NodeNotReady Events)."""
    samples = history.events_of("nodes.ready")
    if not samples:
        return Verdict("node-heartbeats", Status.UNKNOWN, "the node readiness monitor recorded no samples", {})
    worst = min(samples, key=lambda e: e["ready"])
    not_ready = [e for e in samples if e["ready"] < expected]
    declared = history.events_of("nodes.not_ready")
    nodes = sorted({str(e.get("node")) for e in declared})
    figures = {"samples": len(samples), "expected": expected, "fewest_ready": worst["ready"],
               "samples_with_not_ready": len(not_ready), "nodes_declared_not_ready": len(nodes)}
    problems = []
    if not_ready:
        first = not_ready[0]
        problems.append(f"{len(not_ready)}/{len(samples)} samples found nodes not Ready; fewest Ready "
                        f"{worst['ready']}/{expected} at t={worst.t:.1f}; first at t={first.t:.1f}: {first.get('examples')}")
    if declared:
        problems.append(f"the node lifecycle controller declared {len(nodes)} node(s) NotReady, first at "
                        f"t={declared[0].t:.1f}: {', '.join(nodes[:5])}")
    if problems:
        return Verdict("node-heartbeats", Status.FAIL, "; ".join(problems), figures)
    return Verdict("node-heartbeats", Status.PASS,
                   f"all {expected} hollow nodes Ready in each of {len(samples)} samples, none declared NotReady",
                   figures)


@checker("pods-kept")
def pods_kept(history: History, before: list[str], after: list[str], *, max_lost_fraction: float = 0.0) -> Verdict:
    """The hollow pods that existed before are still there (no eviction); compared by UID. The UIDs are the
    scenario's observations, kept in the History with this run (`quorum analyze` judges them again)."""
    lost = set(before) - set(after)
    figures = {"before": len(before), "after": len(after), "lost": len(lost)}
    if not before:
        return Verdict("pods-kept", Status.UNKNOWN, "there were no pods to keep", figures)
    if len(lost) > max_lost_fraction * len(before):
        return Verdict("pods-kept", Status.FAIL, f"{len(lost)} of {len(before)} hollow pods were deleted or evicted",
                       figures)
    return Verdict("pods-kept", Status.PASS, f"all {len(before)} hollow pods kept their identity", figures)


def slo_class(verb: str, scope: str) -> str | None:
    """The SLO class of a call (harness/objectives/catalog.py SLO_CLASSES), None for streaming calls."""
    if verb in MUTATING:
        return "mutating"
    if verb == "get":
        return "get"
    if verb == "list":
        return "list_namespace" if scope == "namespace" else "list_cluster"
    return None


def load_measures(history: History, heartbeats: Verdict | None, *, window_s: float,
                  exclude: list[tuple[float, float]] = (),
                  warmup_s: float = thresholds.LOAD_WARMUP_S) -> list[Measurement]:
    """What a load scenario measured for the objectives: the worst windowed p99 of each SLO class (judged as
    latency_slo judges), and how many hollow nodes were seen NotReady at worst."""
    worst: dict[str, float] = {}
    for row in latency_table(history, window_s, exclude, warmup_s):
        klass = slo_class(row.verb, row.scope)
        if klass is not None and row.count > row.failed:
            worst[klass] = max(worst.get(klass, 0.0), row.worst_window_p99_s)
    measures = [Measurement("api_p99_s", round(value, 3), klass, bound=None) for klass, value in sorted(worst.items())]
    return measures + heartbeat_measures(heartbeats)


def heartbeat_measures(heartbeats: Verdict | None) -> list[Measurement]:
    """How many hollow nodes were seen NotReady at worst; nothing without hollow nodes to watch."""
    if heartbeats is None:
        return []
    figures = heartbeats.figures
    not_ready = None if "expected" not in figures else max(figures["expected"] - figures["fewest_ready"],
                                                             figures.get("nodes_declared_not_ready", 0))
    return [Measurement("nodes_not_ready", not_ready)]
