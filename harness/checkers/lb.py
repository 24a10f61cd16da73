"""LB detection: from a fault's start until the load balancer marked a backend DOWN (its own view, the admin socket), or
until new connections stopped reaching it (seen from outside, harness/monitors/lb_routes.py)."""

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


ROUTE = "lb.route"  # a new connection through the load balancer (harness/monitors/lb_routes.py): value = apiserver
# Consecutive new connections that all go elsewhere before an apiserver counts as out of rotation: with three
# apiservers, one still in a random rotation would get none of 20 with a chance of (2/3)^20, under 0.1 %; a
# round-robin balancer gives it every third.
CONFIRM_PROBES = 20


@checker("lb-routing")
def lb_routed_around(history: History, *, server: str, max_s: float, confirm: int = CONFIRM_PROBES,
                     fault: str | None = None) -> Verdict:
    """Seen from outside, from the fault's start: when the load balancer stopped sending new connections to
    `server`, i.e. when the last one that reached it or failed (refused, reset, never handshaken) was opened, after
    which the next `confirm` opened all reached other apiservers before the fault ended (a connection that hangs is
    timed by its opening: that is when the balancer sent it). Unknown when no connection reached `server`
    before the fault: the probe cannot tell it was ever in rotation."""
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("lb-routing", Status.UNKNOWN, f"no fault{' ' + fault if fault else ''} was recorded", {})
    start, end, start_event = windows[0]
    routes = history.ops_of(ROUTE)
    if not any(op.ok and op.value == server and op.invoke < start for op in routes):
        return Verdict("lb-routing", Status.UNKNOWN, f"no new connection through the load balancer reached {server} "
                       "before the fault, so it was not seen in rotation", {"probes": len(routes)})
    during = [op for op in routes if op.invoke >= start and (end is None or op.invoke <= end)]
    bad = [op for op in during if not op.ok or op.value == server]
    last_bad = bad[-1].invoke if bad else start
    after = [op for op in during if op.invoke > last_bad]
    figures = {"routed_around_s": round(last_bad - start, 3), "allowed_s": max_s, "probes": len(during),
               "reached_it": sum(op.ok for op in bad), "failed": sum(not op.ok for op in bad),
               "clean_after": len(after)}
    what = f"new connections through the load balancer after {start_event.get('name')} at t={start:.2f}"
    if len(after) < confirm and not bad:
        figures["routed_around_s"] = None
        return Verdict("lb-routing", Status.UNKNOWN, f"only {len(during)} {what} were probed, fewer than the {confirm} "
                       f"in a row that show {server} out of rotation", figures)
    if len(after) < confirm:
        figures["routed_around_s"] = None
        last = bad[-1].value if bad[-1].ok else bad[-1].error
        return Verdict("lb-routing", Status.FAIL, f"{what} still reached {server} or failed, the last at "
                       f"t={last_bad:.2f} ({last}), with only {len(after)} in a row going elsewhere after it (needed "
                       f"{confirm})", figures)
    took = last_bad - start
    explanation = (f"{what} stopped reaching {server} {fmt(took)} after it ({len(bad)} reached it or failed, then "
                   f"{len(after)} in a row went elsewhere)")
    if took > max_s:
        return Verdict("lb-routing", Status.FAIL, f"{explanation}, more than the allowed {fmt(max_s)}", figures)
    return Verdict("lb-routing", Status.PASS, f"{explanation} (allowed {fmt(max_s)})", figures)
