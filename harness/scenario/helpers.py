"""Small helpers scenarios share: where a component runs, waiting for health, recording verdicts."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from harness.checkers import Verdict
from harness.history import History
from harness.objectives.catalog import configured_bound
from harness.objectives.judge import meets
from harness.objectives.measurement import Measurement
from harness.objectives.policy import Objectives
from harness.target.protocol import Target, Unsupported, split_id
from harness.topology import Component
from harness.wait import until


def least_backed_off_host(cluster: Target, component: Component) -> str:
    """The host where a crash of `component` meets the smallest restart back-off: the one whose back-off resets
    soonest (none to wait for: first), then the fewest restarts, then the first. A back-off grows with recent
    restarts (a kubelet's until the container has run 10 min), so a kill where an earlier scenario just restarted
    it would measure that scenario's effect, not the cluster's self-healing (docs/scenarios.md)."""
    hosts = cluster.component_hosts(component)
    if not hosts:
        raise LookupError(f"no host runs {component.value}")
    return min(hosts, key=lambda host: (cluster.back_off_reset_in_s(component, host),
                                        cluster.restarts(component, host)))


def twin_defect(cluster: Target, name: str) -> bool:
    """Whether the cluster is a broken twin with this defect switched on (topology `defects:`); a target with no
    topology (a cluster Quorum did not build) has none."""
    defects = getattr(getattr(cluster, "topology", None), "defects", None)
    return bool(defects is not None and getattr(defects, name))


def wait_back_off_reset(cluster: Target, component_id: str) -> float:
    """Wait until a kill of '<component>@<host>' meets the cluster's first restart back-off, not one that an exit
    just before the scenario doubled (seen in CI: a controller-manager that lost its lease and exited by itself 20 s
    before its kill; on kind, one the leader-election scenarios had restarted twice); the seconds waited."""
    component, host = split_id(component_id)
    wait = cluster.back_off_reset_in_s(component, host)
    time.sleep(wait)
    return wait


def wait_healthy(cluster: Target, component_id: str, timeout_s: float, since: float | None = None) -> float | None:
    """Seconds from `since` (monotonic; default now) until the component ('<component>@<host>') passes its own
    health check, or None if it did not within timeout_s of `since`."""
    return wait_all_healthy(cluster, {component_id: timeout_s}, since)[component_id]


def wait_all_healthy(cluster: Target, bounds: dict[str, float], since: float | None = None) -> dict[str, float | None]:
    """Each component ('<component>@<host>' -> its bound in seconds) watched at the same time: the seconds from
    `since` (monotonic; default now) until it passed its own health check, or None if it did not within its bound.
    One after the other would not do: a component with a long bound would use up a shorter one's before its first
    look (a member was once declared not back that was never looked at; docs/scenarios.md)."""
    start = time.monotonic() if since is None else since
    found: dict[str, float | None] = dict.fromkeys(bounds)
    waiting = dict(bounds)

    def each_healthy_or_out_of_time() -> bool:
        for component_id, bound in list(waiting.items()):
            if time.monotonic() - start >= bound:
                del waiting[component_id]
            elif cluster.health.component_healthy(*split_id(component_id)):
                found[component_id] = time.monotonic() - start
                del waiting[component_id]
        return not waiting

    until(each_healthy_or_out_of_time, max(0.0, max(bounds.values(), default=0.0) - (time.monotonic() - start)),
          cluster.health_poll_s)
    return found


def exits_within(cluster: Target, history: History, component_id: str, pid: int | None, since: float,
                 window_s: float) -> list[float]:
    """Watch '<component>@<host>' for window_s from `since` (monotonic); the seconds after `since` at which it
    exited. A supervisor records every exit itself (copied into the History); otherwise the process `pid` is
    watched, and the moment it is gone or replaced is recorded in the History as component.exit (to within one
    look, e.g. one docker exec, about 0.2 s)."""
    deadline = since + window_s
    if cluster.supervisor_events() is None:
        component, host = split_id(component_id)
        if until(lambda: cluster.pid(component, host) != pid, max(0.0, deadline - time.monotonic()), 0.2).held:
            history.event("component.exit", component=component_id, pid=pid, observed=True)
    time.sleep(max(0.0, deadline - time.monotonic()))
    return [e.t - since for e in history.events_of("component.exit", component=component_id) if e.t > since]


# HAProxy's status of a server it sends new connections to: "UP", or "no check" on a balancer without health checks
# (the blind twin), whose servers are always in rotation
IN_ROTATION = ("UP", "no check")


def wait_lb_marks_down(cluster: Target, history: History, server: str, timeout_s: float, *,
                       from_up: bool = False, seen_up_event: threading.Event | None = None) -> float | None:
    """Poll the load balancer's admin socket until it marks `server` DOWN; the moment is recorded in the
    History (lb.marked-down) for the lb-detection checker. Returns the monotonic time, or None.
    from_up: only a change from UP counts (a watch started before the fault must not record a DOWN left over
    from before it, such as an apiserver still counting its rise checks); seen_up_event is set once it was UP."""
    from harness.checkers.lb import MARKED_DOWN
    from harness.errors import ClusterError
    from harness.clients.haproxy_admin import is_down

    seen_up, last = not from_up, None

    def marked_down() -> float | None:
        nonlocal seen_up, last
        try:
            state = cluster.health.lb_server_states().get(server, "not listed")
        except ClusterError as error:  # the LB itself restarting: keep polling until the deadline
            state = f"unreadable: {error.problem[:120]}"
        if state != last:  # what the LB said, as evidence when it never marks the server DOWN
            history.event("lb.state", server=server, state=state)
            last = state
        if seen_up and is_down(state):
            return history.event(MARKED_DOWN, server=server).t
        seen_up = seen_up or state in IN_ROTATION
        if seen_up and seen_up_event is not None:
            seen_up_event.set()
        return None

    return until(marked_down, timeout_s, 0.1).value


@contextlib.contextmanager
def watching_lb_marks_down(cluster: Target, history: History, server: str, timeout_s: float,
                           up_within_s: float) -> Iterator[Callable[[], float | None]]:
    """wait_lb_marks_down in the background, started before a fault acts: a fault that restarts an apiserver blocks
    while it stops (SIGTERM, a grace, SIGKILL), and the load balancer's checks fail from the SIGTERM on, so its
    detection starts there. The block is entered only once the LB marks `server` UP (within up_within_s), so the
    fault starts from a server in rotation. Yields a function that waits for the result (the moment it was marked
    DOWN, or None)."""
    from harness.errors import ClusterError

    found: list[float | None] = []
    up = threading.Event()
    watcher = threading.Thread(
        target=lambda: found.append(wait_lb_marks_down(cluster, history, server, timeout_s + up_within_s,
                                                       from_up=True, seen_up_event=up)),
        name=f"lb-watch-{server}", daemon=True)
    watcher.start()
    if not up.wait(up_within_s):
        states = [e.get("state") for e in history.events_of("lb.state", server=server)]
        raise ClusterError(f"the load balancer did not mark {server} UP within {up_within_s:.0f}s, so a fault "
                           f"cannot start from it in rotation (states it reported: {', '.join(states) or 'none'})",
                           "quorum status shows what is unhealthy; the apiserver's log says why it is not ready")

    def marked_down() -> float | None:
        watcher.join(timeout_s + up_within_s + 5.0)
        return found[0] if found else None

    try:
        yield marked_down
    finally:
        watcher.join(timeout_s + up_within_s + 5.0)


def wait_routed_around(history: History, server: str, timeout_s: float) -> float | None:
    """Seen from outside, during a fault: until new connections through the load balancer stopped reaching `server`
    (lb_routed_around passes, with no bound of its own: the scenario judges the time); the monotonic time the last
    one that reached it or failed was opened, or None when that was not seen within `timeout_s`."""
    from harness.checkers.lb import lb_routed_around

    def routed_at() -> float | None:
        verdict = lb_routed_around(history, server=server, max_s=float("inf"))
        took = verdict.figures.get("routed_around_s")
        return history.fault_windows()[0][0] + took if verdict.passed and took is not None else None

    return until(routed_at, timeout_s, 0.2).value


@contextlib.contextmanager
def watching_lb_takes_out(cluster: Target, history: History, server: str, timeout_s: float,
                          up_within_s: float) -> Iterator[Callable[[], float | None]]:
    """The moment the load balancer took `server` out of rotation during the fault the block applies: its own view
    (watching_lb_marks_down) where its admin interface is reachable, else what clients meet (wait_routed_around,
    with harness/monitors/lb_routes.py probing). Yields a function that waits for it (None: not within
    `timeout_s`)."""
    from harness.target.capabilities import Capability

    if Capability.LB_ADMIN in cluster.capabilities():
        with watching_lb_marks_down(cluster, history, server, timeout_s, up_within_s) as marked_down_at:
            yield marked_down_at
        return
    yield lambda: wait_routed_around(history, server, timeout_s)


def every_client_routed_around_from(cluster: Target, taken_out_at: float | None,
                                    detection_max_s: float) -> float | None:
    """From when the load balancer routes every client around the apiserver it took out at `taken_out_at`
    (watching_lb_takes_out), long-lived connections too: the moment its admin view marked it down, when it also closes
    that apiserver's connections (close_connections_on_failure). Seen from outside, that moment is not visible: a
    balancer that tries a refused connection on the next apiserver sends new ones around a stopping apiserver at once,
    while the connections it already holds stay with it until its checks mark it down, `detection_max_s` later at
    the latest. None when it was never taken out."""
    from harness.target.capabilities import Capability

    if taken_out_at is None or Capability.LB_ADMIN in cluster.capabilities():
        return taken_out_at
    return taken_out_at + detection_max_s


def wait_seen_in_rotation(history: History, server: str, timeout_s: float) -> None:
    """Until a new connection through the load balancer reached `server` (harness/monitors/lb_routes.py), so that a
    fault starts from it in rotation and lb_routed_around has seen it there; a ClusterError when none does."""
    from harness.checkers.lb import ROUTE
    from harness.errors import ClusterError

    if not until(lambda: any(op.ok and op.value == server for op in history.ops_of(ROUTE)), timeout_s, 0.1).held:
        reached = sorted({str(op.value) for op in history.ops_of(ROUTE) if op.ok})
        raise ClusterError(f"no new connection through the load balancer reached {server} within {timeout_s:.0f}s "
                           f"(they reached: {', '.join(reached) or 'nothing'})",
                           "quorum status shows what is unhealthy; the apiserver's log says why it is not ready")


def wait_recorded(history: History, event: str, predicate, timeout_s: float, *, after=None, interval_s: float = 0.5,
                  **attrs) -> float | None:
    """Poll until predicate() holds (first until after() holds, if given) and record `event` in the History at
    that moment; returns its time, or None if it did not happen within timeout_s."""
    deadline = time.monotonic() + timeout_s
    for condition in ([after] if after else []) + [predicate]:
        if not until(condition, max(0.0, deadline - time.monotonic()), interval_s).held:
            return None
    return history.event(event, **attrs).t


def judge(history: History, *verdicts: Verdict, figures: dict | None = None,
          measures: Iterable[Measurement] = ()) -> list[Verdict]:
    """Record verdicts and measurements in the History (so the gate and the report can read them) and attach them.
    Each measurement is also judged against its objective (history.objectives: the session's policy, or the
    defaults): the verdicts returned are the scenario's own, which judge the cluster by its configuration, and one
    per measurement, which judges it by what the user needs."""
    try:
        import allure
    except ImportError:  # pragma: no cover - allure-pytest is a dependency
        allure = None
    measures = list(measures)
    verdicts = (*verdicts, *(meets(m, history.objectives) for m in measures))
    for measurement in measures:
        history.event("measure", **measurement.record())
    for verdict in verdicts:
        history.event("verdict", checker=verdict.checker, status=verdict.status.value,
                      explanation=verdict.explanation, figures=verdict.figures)
    if figures:
        history.event("figures", **figures)
    if allure is not None:
        configured = [v.explain() for v in verdicts if v.checker != "objective"]
        needed = [v.explain() for v in verdicts if v.checker == "objective"]
        text = "consistent with its configuration:\n" + "\n".join(configured or ["(no configuration-derived check)"])
        text += "\n\nmeets the objective:\n" + "\n".join(needed or ["(nothing measured)"])
        allure.attach(text, name="verdicts", attachment_type=allure.attachment_type.TEXT)
        summary = {v.checker: {"status": v.status.value, **v.figures} for v in verdicts if v.checker != "objective"}
        summary |= {f"objective {m.label}": {"value": m.value,
                                             "objective": history.objectives.for_measure(m.name, m.subject),
                                             "configuration": m.bound} for m in measures}
        allure.attach(json.dumps(summary | (figures or {}), indent=1, default=str), name="figures",
                      attachment_type=allure.attachment_type.JSON)
    return list(verdicts)


def allowed_s(name: str, cluster: Target, objectives: Objectives) -> float:
    """How long a scenario waits for, and allows, the measure `name`: what the cluster's own configuration promises
    (harness/objectives/bounds.py), or where it promises nothing (a load balancer that checks nothing) or does not
    say (an inventory that states no health check) the objective, what the user needs (`objectives`: the session's,
    the `objectives` fixture). The measure's record keeps the configured bound apart (None there)."""
    try:
        bound = configured_bound(name, cluster)
    except Unsupported:  # the configuration is someone else's and unstated: the objective alone decides
        bound = None
    if bound is not None:
        return bound
    objective = objectives.for_measure(name)
    if objective is None:  # only a measure kept per subject has none, and none of those is judged this way
        raise ValueError(f"{name} is kept per subject: allowed_s cannot say which subject's objective applies")
    return objective


def lb_takes_back_s(cluster: Target, objectives: Objectives) -> float:
    """How long the load balancer takes to send clients to an apiserver again once it is ready: its checks' rise as
    the configuration states them (harness/thresholds.py), or, where the configuration is someone else's and says
    nothing (an inventory without load_balancer.health_check), the lb_detection_s objective: the time the user
    needs a balancer to act in, so a slower one fails the availability that follows rather than the wait."""
    from harness.thresholds import lb_rise_s

    try:
        return lb_rise_s(cluster.load_balancer_check())
    except Unsupported:
        return objectives.for_measure("lb_detection_s")


def explain_all(verdicts: list[Verdict]) -> str:
    return "\n".join(v.explain() for v in verdicts if not v.passed) or "all verdicts passed"
