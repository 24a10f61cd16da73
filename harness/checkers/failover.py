"""Failover time: from the moment a fault is wholly in effect to the first observation of a new lease holder or etcd
leader."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History


@checker("failover")
def failover_time(history: History, *, subject: str, fault: str | None = None, max_s: float | None = None) -> Verdict:
    """subject: a lease name ("kube-controller-manager", "kube-scheduler") or "etcd" for the etcd leader.

    The lease watcher records an event {"type": "leader", "subject": ..., "holder": identity, "host": ...}
    whenever the holder it observes changes; the time of the new holder is the midpoint of the poll that
    saw it. A restarted process is a new identity even on the same host. The clock starts when the fault's act
    had finished (fault.in_place: a partition's last host cut), or at its start in a history that lacks it.
    """
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("failover", Status.UNKNOWN, f"no fault{' ' + fault if fault else ''} was recorded", {})
    start, _, start_event = windows[0]
    changes = history.events_of("leader", subject=subject)
    before = [e for e in changes if e.t <= start]
    if not before or before[-1].get("holder") is None:
        return Verdict("failover", Status.UNKNOWN,
                       f"no {subject} holder was observed before the fault at t={start:.2f}", {})
    old = before[-1]["holder"]
    new = next((e for e in changes if e.t > start and e.get("holder") not in (None, old)), None)
    if new is None:
        return Verdict("failover", Status.FAIL, f"{subject}: no new holder after {start_event.get('name')} at "
                       f"t={start:.2f} (old holder {old})", {"old_holder": old, "failover_s": None})
    in_place = history.in_place_at(start_event["id"])
    clock = start if in_place is None else in_place
    took = max(0.0, new.t - clock)
    figures = {"old_holder": old, "new_holder": new["holder"], "new_host": new.get("host"), "failover_s": round(took, 3),
               "acting_s": None if in_place is None else round(in_place - start, 3)}
    explanation = (f"{subject}: {old} -> {new['holder']} {fmt(took)} after {start_event.get('name')} "
                   f"{'was in place' if in_place is not None else 'started'} at t={clock:.2f}")
    if max_s is not None and took > max_s:
        return Verdict("failover", Status.FAIL, f"{explanation}, more than the allowed {fmt(max_s)}", figures)
    return Verdict("failover", Status.PASS, explanation + (f" (allowed {fmt(max_s)})" if max_s else ""), figures)


@checker("exclusive-leadership")
def exclusive_leadership(history: History, *, subject: str, old: str, after: float) -> Verdict:
    """Once a holder other than `old` was observed after time `after`, `old` never holds again: two
    holders never overlap in the record (a resumed ex-leader must not renew its lease)."""
    changes = [e for e in history.events_of("leader", subject=subject) if e.t > after]
    takeover = next((e for e in changes if e.get("holder") not in (None, old)), None)
    if takeover is None:
        return Verdict("exclusive-leadership", Status.UNKNOWN, f"{subject}: nobody took over from {old}", {})
    back = next((e for e in changes if e.t > takeover.t and e.get("holder") == old), None)
    figures = {"old_holder": old, "new_holder": takeover.get("holder"), "takeover_t": round(takeover.t, 3)}
    if back is not None:
        return Verdict("exclusive-leadership", Status.FAIL, f"{subject}: {old} held the lease again at t={back.t:.2f} "
                       f"after {takeover.get('holder')} took over at t={takeover.t:.2f}", figures)
    return Verdict("exclusive-leadership", Status.PASS, f"{subject}: {old} never held the lease again after "
                   f"{takeover.get('holder')} took over at t={takeover.t:.2f}", figures)
