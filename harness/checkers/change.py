"""What a team's change must do, judged from the History: every step succeeded within its budget
(harness/change/runner.py records them), the control plane stayed within the version skew policy at every moment
it was observed while the change ran (harness/monitors/versions.py), and it ended on the releases expected."""

from __future__ import annotations

from harness.change.runner import CHANGE, CHANGE_STEP
from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History
from harness.lifecycle.skew import violations
from harness.monitors.leases import RENEWED
from harness.toolchain.versions import Version

# event: components=<'<component>@<host>' -> release>, down=[<component>@<host> running nothing]: one observation
VERSIONS = "versions"
FAULT_MISSED = "change.fault.missed"  # event: a fault the change asked for that could not be injected (fault, why)


@checker("change-completed")
def change_completed(history: History, *, phase: str = "change") -> Verdict:
    """Every step of `phase` ("change" or "rollback") ran, exited 0 and finished within its own budget and what was
    left of the change's: the first that did not is named, with why."""
    begun = history.events_of(CHANGE, phase=phase)
    if not begun:
        return Verdict("change-completed", Status.UNKNOWN, f"no {phase} was recorded", {})
    planned, budget_s = int(begun[-1].get("steps", 0)), begun[-1].get("budget_s")
    steps = [e for e in history.events_of(CHANGE_STEP, phase=phase) if e.t >= begun[-1].t]
    took_s = round(sum(float(e.get("took_s") or 0.0) for e in steps), 3)
    figures = {"planned": planned, "ran": len(steps), "took_s": took_s, "budget_s": budget_s,
               "steps": [{"step": e.get("title"), "on": e.get("on"), "rc": e.get("rc"), "took_s": e.get("took_s")}
                         for e in steps]}
    for event in steps:
        why = _failed(event)
        if why:
            return Verdict("change-completed", Status.FAIL, f"{phase} step {event.get('index')}/{planned} "
                           f"'{event.get('title')}' on {event.get('on')} {why} (its output: {event.get('log')})",
                           figures)
    if len(steps) < planned:
        return Verdict("change-completed", Status.UNKNOWN, f"{phase}: {len(steps)} of {planned} steps were recorded",
                       figures)
    return Verdict("change-completed", Status.PASS, f"{phase}: all {planned} steps exited 0 in {fmt(took_s)} "
                   f"(budget {fmt(budget_s)})", figures)


def _failed(event) -> str:
    if event.get("problem"):
        return str(event["problem"])
    if event.get("timed_out"):
        return f"was still running when its budget ran out after {fmt(event.get('took_s'))}, and was stopped"
    if event.get("rc") != 0:
        return f"exited {event.get('rc')}"
    return ""


@checker("skew-held")
def skew_held(history: History, *, since: float | None = None) -> Verdict:
    """At every observation of the control plane's releases (from `since` on), its components stood within the
    version skew policy (harness/lifecycle/skew.py): the first moment they did not is named, with the rule."""
    seen = [e for e in history.events_of(VERSIONS) if since is None or e.t >= since]
    if not seen:
        return Verdict("skew-held", Status.UNKNOWN, "the control plane's releases were never observed", {})
    states = {tuple(sorted(e.get("components", {}).items())) for e in seen}
    figures = {"observations": len(seen), "states": len(states)}
    for event in seen:
        found = violations({cid: Version.parse(v) for cid, v in event.get("components", {}).items()},
                           talks_to=event.get("talks_to"))
        if found:
            first = found[0]
            return Verdict("skew-held", Status.FAIL, f"at t={event.t:.2f} the control plane broke the version skew "
                           f"policy, rule {first.rule.name} ({first.rule.says}): {first.detail}",
                           {**figures, "rule": first.rule.name, "at": round(event.t, 3)})
    return Verdict("skew-held", Status.PASS, f"all {len(seen)} observations ({len(states)} distinct states of the "
                   "control plane) were within the version skew policy", figures)


@checker("ends-on-releases")
def ends_on_releases(history: History, *, expected: dict[str, str]) -> Verdict:
    """The last observation of the control plane: each component runs the release `expected` names for it (its
    name, else "kubernetes" for every control-plane component), and none is down (a change that leaves one stopped
    has not ended on anything)."""
    if not expected:
        return Verdict("ends-on-releases", Status.UNKNOWN, "the change says no release it must leave (its expect, "
                       "or --expect kubernetes=RELEASE)", {})
    seen = history.events_of(VERSIONS)
    if not seen:
        return Verdict("ends-on-releases", Status.UNKNOWN, "the control plane's releases were never observed", {})
    running = seen[-1].get("components", {})
    wanted = {cid: expected.get(cid.partition("@")[0], expected.get("kubernetes")) for cid in running}
    off = {cid: release for cid, release in sorted(running.items())
           if wanted[cid] is not None and release != wanted[cid]}
    down = list(seen[-1].get("down", []))
    figures = {"components": len(running), "off": off, "down": down}
    if down:
        return Verdict("ends-on-releases", Status.FAIL, f"at the end {', '.join(down)} ran nothing", figures)
    if not running:
        return Verdict("ends-on-releases", Status.UNKNOWN, "no control-plane component was running at the end",
                       figures)
    if off:
        return Verdict("ends-on-releases", Status.FAIL, "at the end: " + "; ".join(
            f"{cid} runs {release}, not {wanted[cid]}" for cid, release in off.items()), figures)
    return Verdict("ends-on-releases", Status.PASS, f"at the end all {len(running)} components run what was "
                   "expected (" + ", ".join(f"{k} {v}" for k, v in sorted(expected.items())) + ")", figures)


@checker("leader-continuity")
def leader_continuity(history: History, *, subject: str, since: float, until: float, max_s: float) -> Verdict:
    """From `since` to `until` (the change), the `subject` lease was renewed at least every `max_s`: the longest
    stretch between two renewals the lease watcher observed (harness/monitors/leases.py), counting from `since` to
    the first and from the last to `until`, is how long the controllers went without a live leader. A stretch the
    watcher could not see (the API down) counts as one without a leader: nobody could tell otherwise."""
    renewals = [e.t for e in history.events_of(RENEWED, subject=subject) if since <= e.t <= until]
    figures = {"renewals": len(renewals), "window_s": round(until - since, 3)}
    if not renewals:
        return Verdict("leader-continuity", Status.FAIL if until - since > max_s else Status.UNKNOWN,
                       f"{subject}: no renewal of its lease was observed in the {fmt(until - since)} of the change",
                       {**figures, "longest_s": None})
    edges = [since, *renewals, until]
    gaps = [(later - earlier, earlier) for earlier, later in zip(edges, edges[1:])]
    longest, at = max(gaps)
    figures.update(longest_s=round(longest, 3), at=round(at, 3))
    said = f"{subject}: the longest stretch without a renewal of its lease was {fmt(longest)} (from t={at:.2f})"
    if longest > max_s:
        return Verdict("leader-continuity", Status.FAIL, f"{said}, over the allowed {fmt(max_s)}", figures)
    return Verdict("leader-continuity", Status.PASS, f"{said}, within {fmt(max_s)} ({len(renewals)} renewals)",
                   figures)


@checker("faults-happened")
def faults_happened(history: History, *, planned: list[str], since: float, until: float) -> Verdict:
    """Each fault the change asked for (`planned`: their names, e.g. "kill") was injected between `since` and `until`,
    the change's start and end: one that was not (its time came after the change ended, or no holder was found to
    kill) leaves the change unjudged under it, never passed."""
    injected = [event.get("name") for start, _, event in history.fault_windows() if since <= start <= until]
    missed = [f"{e.get('fault')}: {e.get('why')}" for e in history.events_of(FAULT_MISSED)]
    figures = {"planned": len(planned), "injected": len(injected), "missed": missed}
    short = [name for name in set(planned) if injected.count(name) < planned.count(name)]
    if short or missed:
        why = "; ".join(missed) or ", ".join(sorted(short))
        return Verdict("faults-happened", Status.UNKNOWN, f"{len(injected)} of the {len(planned)} faults asked for "
                       f"were injected while the change ran (not: {why}): it was not judged under them", figures)
    return Verdict("faults-happened", Status.PASS, f"all {len(planned)} faults asked for were injected while the "
                   "change ran", figures)
