"""Availability of a target as seen by a monitor: % of requests ok, longest outage, time to recover."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History


@checker("availability")
def availability(history: History, *, target: str = "lb", f: str = "api.readyz", threshold_pct: float | None = None,
                 window: tuple[float, float] | None = None, max_recovery_s: float | None = None,
                 new_connections: bool = False) -> Verdict:
    """Judge the requests of `f` to `target` (optionally only those invoked inside `window`; with new_connections,
    only those a prober sent each on a new connection, which the load balancer routes one by one).

    An outage is a run of consecutive non-ok requests; its length runs from the invoke time of its
    first request to the invoke time of the next ok one (or the last request if none follows).
    Recovery is the time from the end of the last fault to the first ok request after the last
    failure that started before that end.
    """
    ops = [o for o in history.ops_of(f, target=target) if (window is None or window[0] <= o.invoke <= window[1])
           and (not new_connections or o.extra.get("fresh"))]
    what = f"{f} requests to {target}" + (" on new connections" if new_connections else "")
    if not ops:
        return Verdict("availability", Status.UNKNOWN, f"no {what} were recorded"
                       + (" in the window" if window else ""), {"requests": 0})
    ok = sum(o.ok for o in ops)
    pct = 100.0 * ok / len(ops)
    longest, start, worst_start = 0.0, None, None
    for op in ops:
        if not op.ok and start is None:
            start = op.invoke
        elif op.ok and start is not None:
            if op.invoke - start > longest:
                longest, worst_start = op.invoke - start, start
            start = None
    if start is not None and ops[-1].invoke - start >= longest:
        longest, worst_start = max(ops[-1].complete - start, longest), start
    recovery = _recovery(history, ops)
    answered = [o.complete - o.invoke for o in ops if o.ok]
    figures = {"availability_pct": round(pct, 3), "requests": len(ops), "failed": len(ops) - ok,
               "slowest_ok_s": round(max(answered), 3) if answered else None,
               "longest_outage_s": round(longest, 3), "recovery_s": None if recovery is None else round(recovery, 3)}
    evidence = f"{ok}/{len(ops)} {what} ok ({pct:.2f}%), longest outage {fmt(longest)}"
    if worst_start is not None:
        evidence += f" starting at t={worst_start:.2f}"
    faults = history.fault_windows()
    if faults:
        evidence += "; fault windows: " + ", ".join(f"{e.get('name')} {s:.2f}-{fmt(t) if t is None else f'{t:.2f}'}"
                                                   for s, t, e in faults)
    failures = []
    if threshold_pct is not None and pct < threshold_pct:
        failures.append(f"availability {pct:.2f}% is below {threshold_pct}%")
    if max_recovery_s is not None and recovery is not None and recovery > max_recovery_s:
        failures.append(f"recovery took {fmt(recovery)}, more than {fmt(max_recovery_s)}")
    if max_recovery_s is not None and recovery is None and ops and not ops[-1].ok:
        failures.append("never recovered: the last request failed")
    status = Status.FAIL if failures else Status.PASS
    return Verdict("availability", status, "; ".join(failures + [evidence]), figures)


def _recovery(history: History, ops) -> float | None:
    ended = [end for _, end, _ in history.fault_windows() if end is not None]
    if not ended:
        return None
    last_end = max(ended)
    failures_before = [o for o in ops if not o.ok and o.invoke <= last_end]
    if not failures_before:
        return 0.0
    after = [o for o in ops if o.ok and o.invoke > failures_before[-1].invoke]
    if not after:
        return None
    return max(0.0, after[0].complete - last_end)


@checker("write-outage")
def write_outage(history: History, *, f: str = "etcd.put", max_gap_s: float | None = None,
                 window: tuple[float, float] | None = None) -> Verdict:
    """The longest stretch with no acknowledged `f` from any client (completion to completion, or from the
    last acknowledgement to the end of the last attempt when writes never came back), inside `window` if
    given: how long the system as a whole stopped accepting writes."""
    ops = [o for o in history.ops_of(f) if window is None or window[0] <= o.complete <= window[1]]
    done = sorted(o.complete for o in ops if o.ok)
    if len(done) < 2:
        return Verdict("write-outage", Status.FAIL if ops else Status.UNKNOWN,
                       f"fewer than two acknowledged {f} among {len(ops)} attempts: writes stopped", {"ok": len(done)})
    gaps = [(b - a, a) for a, b in zip(done, done[1:])]
    # writes that never came back: the stretch from the last acknowledgement to the last attempt's end
    last_attempt = max(o.complete for o in ops)
    gaps.append((last_attempt - done[-1], done[-1]))
    gap, at = max(gaps)
    figures = {"longest_gap_s": round(gap, 3), "ok": len(done), "attempts": len(ops)}
    text = f"longest stretch without an acknowledged {f}: {fmt(gap)} from t={at:.2f}"
    if max_gap_s is not None and gap > max_gap_s:
        return Verdict("write-outage", Status.FAIL, f"{text}, more than the allowed {fmt(max_gap_s)}", figures)
    return Verdict("write-outage", Status.PASS, text + (f" (allowed {fmt(max_gap_s)})" if max_gap_s else ""), figures)
