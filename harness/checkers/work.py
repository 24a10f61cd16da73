"""The controllers' work: how soon what a user asks of the controller-manager (harness/monitors/work.py's probes) or
of the scheduler (harness/monitors/binding.py's) gets done: without a fault (work-done), after a leader's kill
(work-resumed), and while any fault runs and once its harm is undone (work-kept). Unknown is kept apart from fail: a
probe the API never took, or one the monitor's stop cut short before its work could be late, is no evidence either
way."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History, Op, Outcome

REPLICAS_PROBE = "work.replicas"  # the probe whose work the controller-manager's leader does (the monitor's docstring)
COLLECT_PROBE = "work.collect"  # a deleted Deployment's ReplicaSet and pods collected (the garbage collector)
NAMESPACE_PROBE = "work.namespace"  # a deleted namespace finalized (the namespace controller)
CONTROLLER_PROBES = (REPLICAS_PROBE, COLLECT_PROBE, NAMESPACE_PROBE)
BINDING_PROBE = "work.binding"  # the probe whose work the scheduler's leader does
# a ready pod's address in its Service's EndpointSlice (the endpointslice controller, once the pod is bound and ready)
ENDPOINTS_PROBE = "work.endpoints"
CONTROLLER_MANAGER_LEASE = "kube-controller-manager"  # whose holder does the controller probes' work
# each probe's figure: the measure it gives (harness/objectives/catalog.py)
RESUMED_FIGURE = {REPLICAS_PROBE: "reconcile_after_failover_s", BINDING_PROBE: "bind_after_failover_s"}


@checker("work-resumed")
def work_resumed(history: History, *, fault: str | None = None, max_s: float | None = None,
                 probe: str = REPLICAS_PROBE) -> Verdict:
    """From the moment the fault is wholly in effect (fault.in_place, else its start) to the first `probe` asked for
    after it whose work was seen done: the work a new leader does, not only its lease. A probe asked for before the
    fault is not counted as resumed work (its work may have been done just before), but one still waiting `max_s`
    after the fault proves the work was not resumed in time, whenever it was asked for."""
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("work-resumed", Status.UNKNOWN, f"no fault{' ' + fault if fault else ''} was recorded", {})
    start, _, start_event = windows[0]
    in_place = history.in_place_at(start_event["id"])
    clock = start if in_place is None else in_place
    probes = history.ops_of(probe)
    before = [op for op in probes if op.ok and op.complete <= start]
    resumed = next((op for op in sorted(probes, key=lambda op: op.complete) if op.ok and op.invoke >= clock), None)
    figures = {"probe": probe, "done_before_fault": len(before),
               RESUMED_FIGURE[probe]: None if resumed is None else round(resumed.complete - clock, 3)}
    named = f"{start_event.get('name')} {'in place' if in_place is not None else 'started'} at t={clock:.2f}"
    if resumed is not None:
        took = resumed.complete - clock
        explanation = (f"{probe} {resumed.value} asked for {fmt(resumed.invoke - clock)} after {named} was done "
                       f"{fmt(took)} after it")
        if max_s is not None and took > max_s:
            return Verdict("work-resumed", Status.FAIL, f"{explanation}, more than the allowed {fmt(max_s)}", figures)
        return Verdict("work-resumed", Status.PASS, explanation + (f" (allowed {fmt(max_s)})" if max_s else ""),
                       figures)
    late = _waited_past(probes, clock, max_s)
    if late is not None:
        waited = late.complete - max(late.invoke, clock)
        return Verdict("work-resumed", Status.FAIL, f"{probe} {late.value} was still not done {fmt(waited)} after "
                       f"{named if late.invoke <= clock else 'it was asked for'}: {late.error}",
                       {**figures, "waited_s": round(waited, 3)})
    return Verdict("work-resumed", Status.UNKNOWN, f"no {probe} asked for after {named} ended with its work done or "
                   f"late ({len([op for op in probes if op.invoke >= clock])} asked for after it)", figures)


@checker("work-done")
def work_done(history: History, *, max_s: dict[str, float], samples: int) -> Verdict:
    """Without a fault, each probe `max_s` names had its work done at least `samples` times, the slowest within its
    bound. A probe whose deadline passed, or that had waited longer than its bound when the monitor stopped, fails
    it; a probe the API never took is no evidence, and fewer than `samples` done of any probe is unknown.

    `<probe>_slowest_s` is the longest seen: a probe done, or one never done, whose wait is a floor of its time (a
    probe stuck past its bound is not a fast one). It is None when no probe was done and none waited past its bound:
    nothing to time."""
    figures: dict[str, float | int | None] = {}
    late: list[str] = []
    short: list[str] = []
    for probe, bound in max_s.items():
        ops = history.ops_of(probe)
        done = [op for op in ops if op.ok]
        slowest = max(done, key=_took, default=None)
        waiting = max((op for op in ops if _unfinished(op)), key=_took, default=None)
        longest = max((_took(op) for op in (slowest, waiting) if op is not None), default=None)
        key = probe.removeprefix("work.")
        figures[f"{key}_done"] = len(done)
        figures[f"{key}_slowest_s"] = (round(longest, 3) if slowest is not None or (longest or 0) > bound
                                       else None)
        if waiting is not None and _took(waiting) > bound:
            late.append(f"{probe} {waiting.value} not done {fmt(_took(waiting))} after it was asked for, more than "
                        f"the allowed {fmt(bound)}: {waiting.error}")
        elif slowest is not None and _took(slowest) > bound:
            late.append(f"{probe} {slowest.value} done {fmt(_took(slowest))} after it was asked for, more than the "
                        f"allowed {fmt(bound)}")
        if len(done) < samples:
            short.append(f"{probe} done {len(done)} times of the {samples} needed")
    if late:
        return Verdict("work-done", Status.FAIL, "; ".join(late), figures)
    if short:
        return Verdict("work-done", Status.UNKNOWN, "too few samples to judge: " + "; ".join(short), figures)
    slowest_all = ", ".join(f"{probe} {figures[probe.removeprefix('work.') + '_slowest_s']:.2f}s (allowed "
                            f"{fmt(bound)})" for probe, bound in max_s.items())
    return Verdict("work-done", Status.PASS, f"every probe's work done at least {samples} times, the slowest: "
                   f"{slowest_all}", figures)


@checker("work-kept")
def work_kept(history: History, *, max_s: dict[str, float], undone_at: list[float | None],
              lease: str = CONTROLLER_MANAGER_LEASE, fault: str | None = None) -> Verdict:
    """While faults run and after them, the work goes on: each probe `max_s` names that was waiting when a fault
    started, or was asked for after one, has its work done within its bound, counted from the later of its asking and
    the moment the work could resume. That moment is the fault's harm undone (`undone_at`, one per fault window, in
    order: e.g. a killed component healthy again), or, if `lease` changed holder during the fault, the last change:
    a new leader's first sync is what reconcile_after_failover_s judges, the work after it is judged here. A probe
    never done whose wait so counted passed its bound fails it, as does one done late.

    Unknown: no fault, a fault never undone (nothing to count from), no holder of `lease` seen before the first fault
    (a leader change would go unseen: the lease watcher must run), or a probe with none asked for after the last
    fault's harm was undone and done (the work's return is not shown).

    `<probe>_slowest_s` is the longest so counted (a wait of a probe never done included); `<probe>_done_after` how
    many asked for after the last resumption were done; `resumed_after_s` each fault's start to its resumption."""
    windows = history.fault_windows(fault)
    if not windows:
        return Verdict("work-kept", Status.UNKNOWN, f"no fault{' ' + fault if fault else ''} was recorded", {})
    if len(undone_at) != len(windows):
        raise ValueError(f"undone_at has {len(undone_at)} moments for {len(windows)} fault windows")
    starts = [start for start, _, _ in windows]
    figures: dict = {}
    if any(moment is None for moment in undone_at):
        return Verdict("work-kept", Status.UNKNOWN, "a fault's harm was never undone (its component never healthy "
                       "again): nothing to count the work's return from", figures)
    changes = history.events_of("leader", subject=lease)
    if not any(event.t <= starts[0] for event in changes):
        return Verdict("work-kept", Status.UNKNOWN, f"no {lease} holder was observed before the fault at "
                       f"t={starts[0]:.2f}: a leader change would go unseen", figures)
    resumes = work_could_resume(history, undone_at, lease=lease, fault=fault)
    figures["resumed_after_s"] = [round(resume - start, 3) for resume, start in zip(resumes, starts)]
    figures["leader_changes"] = sum(1 for event in changes if event.t > starts[0])
    late: list[str] = []
    short: list[str] = []
    for probe, bound in max_s.items():
        key = probe.removeprefix("work.")
        judged = [op for op in history.ops_of(probe) if op.complete > starts[0] and (op.ok or _unfinished(op))]
        delays = []
        for op in judged:
            clock = max([op.invoke, *(resume for resume, start in zip(resumes, starts) if start < op.complete)])
            delays.append((max(0.0, op.complete - clock), op))
        worst = max(delays, key=lambda pair: pair[0], default=None)
        timed = worst is not None and (any(op.ok for _, op in delays) or worst[0] > bound)
        figures[f"{key}_slowest_s"] = round(worst[0], 3) if timed else None
        figures[f"{key}_done_after"] = sum(1 for op in judged if op.ok and op.invoke >= resumes[-1])
        if worst is not None and worst[0] > bound:
            delay, op = worst
            said = "done" if op.ok else f"not done ({op.error})"
            late.append(f"{probe} {op.value} {said} {fmt(delay)} after the work could resume, more than the "
                        f"allowed {fmt(bound)}")
        if not figures[f"{key}_done_after"]:
            short.append(f"no {probe} asked for after t={resumes[-1]:.2f} was done")
    when = ", ".join(f"{fmt(after)} after the fault's start" for after in figures["resumed_after_s"])
    if late:
        return Verdict("work-kept", Status.FAIL, f"work resumed {when}: " + "; ".join(late), figures)
    if short:
        return Verdict("work-kept", Status.UNKNOWN, f"the work's return is not shown: {'; '.join(short)}", figures)
    slowest = ", ".join(f"{probe} {figures[probe.removeprefix('work.') + '_slowest_s']:.2f}s (allowed {fmt(bound)})"
                        for probe, bound in max_s.items())
    return Verdict("work-kept", Status.PASS, f"work resumed {when}; the slowest after it: {slowest}", figures)


def work_could_resume(history: History, undone_at: list[float], *, lease: str = CONTROLLER_MANAGER_LEASE,
                      fault: str | None = None) -> list[float]:
    """For each fault window, when its work could resume: its harm undone (`undone_at`, in the windows' order), or
    the last change of `lease`'s holder seen before the next window, whichever is later (work-kept's docstring)."""
    starts = [start for start, _, _ in history.fault_windows(fault)]
    changes = [event.t for event in history.events_of("leader", subject=lease)]
    ends = [*starts[1:], float("inf")]
    return [max([undone, *(t for t in changes if start < t < end)])
            for undone, start, end in zip(undone_at, starts, ends)]


def reconcile_bounds(reconcile_s: float, namespace_grace_s: float) -> dict[str, float]:
    """Each controller probe's bound from the reconcile_s objective: a namespace's deletion has the namespace
    controller's grace more (harness/thresholds.py)."""
    return {REPLICAS_PROBE: reconcile_s, COLLECT_PROBE: reconcile_s, NAMESPACE_PROBE: reconcile_s + namespace_grace_s}


def slowest_reconcile_s(verdict: Verdict, namespace_grace_s: float) -> float | None:
    """reconcile_s from work-done's or work-kept's figures: the slowest controller probe (a stuck one's wait
    included), a namespace's less the namespace controller's grace. None unless every probe was timed: a probe never
    done is not a fast one."""
    slowest = [verdict.figures.get(f"{probe.removeprefix('work.')}_slowest_s") for probe in CONTROLLER_PROBES]
    if any(value is None for value in slowest):
        return None
    replicas, collect, namespace = slowest
    return round(max(replicas, collect, namespace - namespace_grace_s), 3)


def _waited_past(probes: list[Op], clock: float, max_s: float | None) -> Op | None:
    """A probe not done (deadline passed, or still pending at the monitor's stop) that had waited, counted from the
    fault or from its asking if later, longer than `max_s` (any such wait when there is no bound)."""
    for op in probes:
        if op.ok or op.complete <= clock or not _unfinished(op):
            continue
        waited = op.complete - max(op.invoke, clock)
        if max_s is None or waited > max_s:
            return op
    return None


def _took(op: Op) -> float:
    """How long a probe took, or for one never done, how long it waited."""
    return op.complete - op.invoke


def _unfinished(op: Op) -> bool:
    """The probe ended without its work done: its deadline passed (FAIL), or the monitor stopped while it waited."""
    return op.outcome is Outcome.FAIL or bool(op.extra.get("pending"))
