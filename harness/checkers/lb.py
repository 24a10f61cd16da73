"""LB detection: from a fault's start until the load balancer marked a backend DOWN."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History

MARKED_DOWN = "lb.marked-down"  # event {"server": host}, recorded by harness.scenario.helpers.wait_lb_marks_down


@checker("lb-detection")
def lb_detection(history: History, *, server: str, max_s: float, fault: str | None = None) -> Verdict:
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("lb-detection", Status.UNKNOWN, f"no fault{' ' + fault if fault else ''} was recorded", {})
    start, _, start_event = windows[0]
    marked = next((e for e in history.events_of(MARKED_DOWN, server=server) if e.t >= start), None)
    if marked is None:
        states = [e.get("state") for e in history.events_of("lb.state", server=server)]
        seen = f"; the states it reported: {', '.join(dict.fromkeys(states))}" if states else ""
        return Verdict("lb-detection", Status.FAIL, f"the load balancer never marked {server} DOWN after "
                       f"{start_event.get('name')} at t={start:.2f} (allowed {fmt(max_s)}){seen}",
                       {"detection_s": None})
    took = marked.t - start
    explanation = f"the load balancer marked {server} DOWN {fmt(took)} after {start_event.get('name')} at t={start:.2f}"
    figures = {"detection_s": round(took, 3), "allowed_s": max_s}
    if took > max_s:
        return Verdict("lb-detection", Status.FAIL, f"{explanation}, more than the allowed {fmt(max_s)}", figures)
    return Verdict("lb-detection", Status.PASS, f"{explanation} (allowed {fmt(max_s)})", figures)
