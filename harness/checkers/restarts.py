"""Restart accounting: after each exit, the supervisor started the component again within its backoff."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History


@checker("restarts")
def restart_accounting(history: History, *, component: str, max_backoff_s: float, slack_s: float = 1.0,
                       expect_exit: bool = True) -> Verdict:
    """component: "<component>@<host>". Every exit must be followed by a start within the restart
    backoff in force (at most `max_backoff_s`) plus `slack_s` (process spawn and bookkeeping)."""
    exits = history.events_of("component.exit", component=component)
    starts = history.events_of("component.start", component=component)
    if not exits:
        status = Status.FAIL if expect_exit else Status.PASS
        return Verdict("restarts", status, f"{component} never exited during the test", {"exits": 0})
    gaps = []
    for exit_event in exits:
        nxt = next((s for s in starts if s.t > exit_event.t), None)
        if nxt is None:
            return Verdict("restarts", Status.FAIL, f"{component} exited at t={exit_event.t:.2f} (code "
                           f"{exit_event.get('code')}) and was never started again", {"exits": len(exits), "restarted": len(gaps)})
        gaps.append(nxt.t - exit_event.t)
    worst = max(gaps)
    figures = {"exits": len(exits), "restarted": len(gaps), "worst_restart_s": round(worst, 3)}
    if worst > max_backoff_s + slack_s:
        return Verdict("restarts", Status.FAIL, f"{component} took {fmt(worst)} to restart, more than the backoff "
                       f"{fmt(max_backoff_s)} + {fmt(slack_s)}", figures)
    return Verdict("restarts", Status.PASS, f"{component} restarted after each of {len(exits)} exits, at worst "
                   f"{fmt(worst)} later (allowed {fmt(max_backoff_s + slack_s)})", figures)
