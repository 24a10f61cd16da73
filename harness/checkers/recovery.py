"""Recovery after a fault: a state the scenario observed and recorded (an event) came within a bound."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.clients.marker import MarkerWrite
from harness.history import History


@checker("recovery")
def recovered_within(history: History, *, event: str, what: str, max_s: float, since: str = "start",
                     fault: str | None = None) -> Verdict:
    """The first `event` after the last fault's start (since="start"), end (since="end") or the first event named
    `since` after its start (an operator's action the scenario recorded) came within max_s; `fault` names which
    fault (its last one), when a later fault is part of the same scenario. The scenario records `event` when it
    first observes the recovered state (e.g. every node Ready)."""
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("recovery", Status.UNKNOWN, f"no {fault or 'fault'} was recorded, so there is nothing to "
                       "recover from")
    start, end, fault = windows[-1]
    if since == "start":
        origin, named = start, "the fault's start"
    elif since == "end":
        origin, named = end, "the fault's end"
        if origin is None:
            return Verdict("recovery", Status.UNKNOWN, f"{fault.get('name')} was never healed")
    else:
        origin = next((e.t for e in history.events_of(since) if e.t >= start), None)
        named = since
        if origin is None:
            return Verdict("recovery", Status.UNKNOWN, f"no {since} was recorded after the fault's start")
    return _first_after(history, "recovery", "recovered_after_s", event=event, origin=origin, named=named, what=what,
                        max_s=max_s)


def _first_after(history: History, checker: str, figure: str, *, event: str, origin: float, named: str, what: str,
                 max_s: float) -> Verdict:
    """The first `event` at or after `origin` came within max_s; its delay is the figure named `figure`."""
    seen = next((e for e in history.events_of(event) if e.t >= origin), None)
    if seen is None:
        return Verdict(checker, Status.FAIL, f"{what} was never observed after {named}", {"bound_s": max_s})
    took = seen.t - origin
    figures = {figure: round(took, 2), "bound_s": max_s}
    if took > max_s:
        return Verdict(checker, Status.FAIL, f"{what} {fmt(took)} after {named}, more than {fmt(max_s)}", figures)
    return Verdict(checker, Status.PASS, f"{what} {fmt(took)} after {named} (bound {fmt(max_s)})", figures)


@checker("followed-within")
def followed_within(history: History, *, cause: str, effect: str, what: str, max_s: float) -> Verdict:
    """The first `effect` event after the first `cause` event came within max_s: the scenario records `cause` when it
    makes a change (not a fault: e.g. a secret updated) and `effect` when it first observes the change taken up."""
    start = next((e.t for e in history.events_of(cause)), None)
    if start is None:
        return Verdict("followed-within", Status.UNKNOWN, f"no {cause} was recorded, so there is nothing to follow")
    return _first_after(history, "followed-within", "after_s", event=effect, origin=start, named=cause, what=what,
                        max_s=max_s)


@checker("never-observed")
def never_observed(history: History, *, event: str, what: str) -> Verdict:
    """No `event` after the last fault's start: the scenario records one each time it observes a state that must
    never happen (e.g. a stale checkpoint running)."""
    windows = history.fault_windows()
    if not windows:
        return Verdict("never-observed", Status.UNKNOWN, "no fault was recorded, so there is nothing to judge after")
    seen = [e for e in history.events_of(event) if e.t >= windows[-1][0]]
    if seen:
        return Verdict("never-observed", Status.FAIL, f"{what} observed {len(seen)} time(s) after the fault's start, "
                       f"first {seen[0].t - windows[-1][0]:.1f}s after it: {seen[0].attrs}", {"observed": len(seen)})
    return Verdict("never-observed", Status.PASS, f"{what} never observed after the fault's start", {"observed": 0})


@checker("durability")
def object_kept(history: History, *, what: str, written: str | MarkerWrite | dict, read: str | None) -> Verdict:
    """An object written before (or during) the fault reads back with the same value after it; a MarkerWrite
    without a value is a write the API refused (its problem is the explanation). What was written and read are the
    scenario's observations, kept in the History with this run (a MarkerWrite as its fields, which `quorum analyze`
    hands back as a dict)."""
    figures = {}
    if isinstance(written, dict):
        written = MarkerWrite(**written)
    if isinstance(written, MarkerWrite):
        figures = {"write_attempts": written.attempts, "write_s": written.took_s}
        if written.value is None:
            return Verdict("durability", Status.FAIL, f"{what} could not be written in {written.attempts} "
                           f"attempt(s) over {fmt(written.took_s)}: {written.problem}", figures)
        written = written.value
    if read == written:
        return Verdict("durability", Status.PASS, f"{what} reads back unchanged", figures)
    return Verdict("durability", Status.FAIL, f"{what} was lost: wrote {written!r}, read {read!r}", figures)
