"""A dead node declared: from the moment a node's heartbeats stopped (the fault wholly in effect) to the node lifecycle
controller's NodeNotReady Event for that node, or the node monitor's first sample finding it not Ready, whichever the
monitor saw first (harness/monitors/nodes.py reads both every few seconds). A node never declared fails only once the
monitor had read for longer than the bound while the fault lasted; a shorter watch is no evidence either way."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import Event, History

NOT_READY_EVENT = "nodes.not_ready"  # the node monitor's record of a NodeNotReady Event
WENT_NOT_READY = "nodes.went_not_ready"  # the node monitor's sample finding a node not Ready, Ready in the one before
READ = "nodes.list"  # the node monitor's read of the nodes and their Events


def declared_at(history: History, node: str, since: float) -> Event | None:
    """The node monitor's first record, at or after `since`, of `node` declared NotReady: its Event read, or a
    sample finding it newly not Ready, whichever came first; None before either."""
    seen = [e for kind in (NOT_READY_EVENT, WENT_NOT_READY) for e in history.events_of(kind, node=node) if e.t >= since]
    return min(seen, key=lambda e: e.t, default=None)


@checker("node-declared-not-ready")
def node_declared_not_ready(history: History, *, node: str, fault: str | None = None,
                            max_s: float | None = None) -> Verdict:
    """`node`: the node whose heartbeats the fault stopped."""
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("node-declared-not-ready", Status.UNKNOWN, f"no fault{' ' + fault if fault else ''} was "
                       "recorded", {})
    start, end, start_event = windows[0]
    in_place = history.in_place_at(start_event["id"])
    clock = start if in_place is None else in_place
    named = f"{start_event.get('name')} {'in place' if in_place is not None else 'started'} at t={clock:.2f}"
    declared = declared_at(history, node, clock)
    if declared is not None:
        took = declared.t - clock
        figures = {"node": node, "node_not_ready_s": round(took, 3)}
        how = declared.get("message") or "a sample found it not Ready"
        explanation = f"{node} declared NotReady {fmt(took)} after {named} ({how})"
        if max_s is not None and took > max_s:
            return Verdict("node-declared-not-ready", Status.FAIL, f"{explanation}, more than the allowed {fmt(max_s)}",
                           figures)
        return Verdict("node-declared-not-ready", Status.PASS,
                       explanation + (f" (allowed {fmt(max_s)})" if max_s is not None else ""), figures)
    # read while the fault lasted: a read after its heal would see a node that is alive again
    reads = [op for op in history.ops_of(READ) if op.ok and clock <= op.invoke and (end is None or op.complete <= end)]
    watched = max((op.complete for op in reads), default=clock) - clock
    figures = {"node": node, "node_not_ready_s": None, "watched_s": round(watched, 3), "reads": len(reads)}
    if max_s is not None and watched > max_s:
        return Verdict("node-declared-not-ready", Status.FAIL, f"{node} was not declared NotReady in {fmt(watched)} of "
                       f"{len(reads)} reads after {named}, more than the allowed {fmt(max_s)}", figures)
    return Verdict("node-declared-not-ready", Status.UNKNOWN, f"{node} was not declared NotReady in the {fmt(watched)} "
                   f"the node monitor read after {named}: too short a watch to judge"
                   + (f" against {fmt(max_s)}" if max_s is not None else ""), figures)
