"""What a release change must leave behind, judged from the History: every component on the intended release, and
the leases handed over in time whenever a step restarted their holder."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History

RELEASE = "release"  # event: component=<component>@<host>, running=<version or None>, reported=<its /version, if any>


def record_releases(history: History, running: dict[str, str | None], reported: dict[str, str | None],
                    *, when: str) -> None:
    """One `release` event per component: the release of the binary it runs, and for one that serves /version (an
    apiserver, an etcd member) the release it answers with; `when` names the moment (e.g. "after-upgrade")."""
    for component_id in sorted(set(running) | set(reported)):
        history.event(RELEASE, component=component_id, running=running.get(component_id),
                      reported=reported.get(component_id), when=when)


@checker("on-release")
def on_release(history: History, *, expected: str, when: str) -> Verdict:
    """Every component recorded at `when` runs `expected`, and each that serves /version reports it there."""
    events = history.events_of(RELEASE, when=when)
    if not events:
        return Verdict("on-release", Status.UNKNOWN, f"no component's release was recorded {when}", {})
    off = {e["component"]: e.get("running") for e in events if e.get("running") != expected}
    misreported = {e["component"]: e.get("reported") for e in events
                   if e.get("reported") is not None and e.get("reported") != expected}
    figures = {"components": len(events), "expected": expected, "off_release": off, "misreported": misreported}
    if off or misreported:
        return Verdict("on-release", Status.FAIL, f"{when}: not on {expected}: "
                       + "; ".join([*(f"{c} runs {v}" for c, v in off.items()),
                                    *(f"{c} answers /version with {v}" for c, v in misreported.items())]), figures)
    reports = " and each that serves /version reports it" if any(e.get("reported") for e in events) else ""
    return Verdict("on-release", Status.PASS, f"{when}: all {len(events)} components run {expected}{reports}", figures)


@checker("lease-handover")
def lease_handovers(history: History, *, subject: str, fault: str, max_s: float) -> Verdict:
    """Each `fault` on '<subject>@<host>' while that host held the `subject` lease: a new holder is observed within
    `max_s` of the fault being in place (the old holder's process restarted, the lease must not stay with it
    longer than a failover). A step on a host that did not hold the lease hands nothing over."""
    changes = history.events_of("leader", subject=subject)
    handovers: list[dict] = []
    for start, _, event in history.fault_windows(fault):
        component, _, host = str(event.get("params", {}).get("component", "")).partition("@")
        # the last holder before the step: a release on SIGTERM can be stamped ahead of the step's own start (the
        # lease monitor stamps the midpoint of the poll that saw it), and an unheld lease names no host
        before = [e for e in changes if e.t <= start and e.get("holder") is not None]
        if component != subject or not before or before[-1].get("host") != host:
            continue
        old = before[-1]["holder"]
        clock = history.in_place_at(event["id"]) or start
        new = next((e for e in changes if e.t > start and e.get("holder") not in (None, old)), None)
        handovers.append({"from": host, "to": None if new is None else new.get("host"),
                          "took_s": None if new is None else round(max(0.0, new.t - clock), 3)})
    took = [h["took_s"] for h in handovers]
    figures = {"handovers": handovers, "longest_s": None if None in took else max(took, default=None)}
    if not handovers:
        return Verdict("lease-handover", Status.UNKNOWN, f"{subject}: no {fault} acted on the lease's holder, so no "
                       "handover was observed", figures)
    late = [h for h in handovers if h["took_s"] is None or h["took_s"] > max_s]
    said = "; ".join(f"{h['from']} -> {h['to']} in {fmt(h['took_s'])}" for h in handovers)
    if late:
        return Verdict("lease-handover", Status.FAIL, f"{subject}: {said}: not within {fmt(max_s)}", figures)
    return Verdict("lease-handover", Status.PASS, f"{subject}: {said} (allowed {fmt(max_s)})", figures)
