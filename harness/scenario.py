"""Small helpers scenarios share: where a component runs, waiting for health, recording verdicts."""

from __future__ import annotations

import json
import time

from harness.checkers import Verdict
from harness.cluster import Cluster
from harness.history import History
from harness.topology import Component


def first_host_running(cluster: Cluster, component: Component) -> str:
    """The first host of the topology that runs `component`; on kind, the first control-plane node (each runs
    the whole control plane as static pods)."""
    if cluster.state.backend == "kind":
        return cluster.nodes("control-plane")[0]  # type: ignore[attr-defined]
    for host in cluster.topology.hosts:
        if component in cluster.topology.components_on(host):
            return host.name
    raise LookupError(f"no host runs {component.value}")


def wait_healthy(cluster: Cluster, component_id: str, timeout_s: float) -> float | None:
    """Seconds until the component ('<component>@<host>') passes its health check, or None if it did not within
    timeout_s: the supervisor's process and its health probe; on kind, the static pod's own check in its node."""
    from harness.health import probe

    on_kind = cluster.state.backend == "kind"
    component, node = component_id.split("@", 1)

    def healthy() -> bool:
        if on_kind:
            return cluster.component_healthy(node, component)  # type: ignore[attr-defined]
        return cluster.pid(component_id) is not None and probe(cluster.specs[component_id].health, 0.5)

    interval_s = 0.5 if on_kind else 0.1  # on kind each check is a docker exec or a request into the node
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if healthy():
            return time.monotonic() - start
        time.sleep(interval_s)
    return None


def wait_lb_marks_down(cluster: Cluster, history: History, server: str, timeout_s: float) -> float | None:
    """Poll the load balancer's admin socket until it marks `server` DOWN; the moment is recorded in the
    History (lb.marked-down) for the lb-detection checker. Returns the monotonic time, or None."""
    from harness.checkers.lb import MARKED_DOWN
    from harness.errors import ClusterError
    from harness.lbstate import is_down

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if is_down(cluster.lb_server_states().get(server, "")):
                return history.event(MARKED_DOWN, server=server).t
        except ClusterError:
            pass  # the LB itself restarting: keep polling until the deadline
        time.sleep(0.1)
    return None


def wait_recorded(history: History, event: str, predicate, timeout_s: float, *, after=None, interval_s: float = 0.5,
                  **attrs) -> float | None:
    """Poll until predicate() holds (first until after() holds, if given) and record `event` in the History at
    that moment; returns its time, or None if it did not happen within timeout_s."""
    deadline = time.monotonic() + timeout_s
    for condition in ([after] if after else []) + [predicate]:
        while not condition():
            if time.monotonic() >= deadline:
                return None
            time.sleep(interval_s)
    return history.event(event, **attrs).t


def judge(history: History, *verdicts: Verdict, figures: dict | None = None) -> list[Verdict]:
    """Record verdicts in the History (so the gate and the report can read them) and attach them."""
    try:
        import allure
    except ImportError:  # pragma: no cover - allure-pytest is a dependency
        allure = None
    for verdict in verdicts:
        history.event("verdict", checker=verdict.checker, status=verdict.status.value,
                      explanation=verdict.explanation, figures=verdict.figures)
    if figures:
        history.event("figures", **figures)
    if allure is not None:
        text = "\n".join(v.explain() for v in verdicts)
        allure.attach(text, name="verdicts", attachment_type=allure.attachment_type.TEXT)
        summary = {v.checker: {"status": v.status.value, **v.figures} for v in verdicts} | (figures or {})
        allure.attach(json.dumps(summary, indent=1, default=str), name="figures",
                      attachment_type=allure.attachment_type.JSON)
    return list(verdicts)


def explain_all(verdicts: list[Verdict]) -> str:
    return "\n".join(v.explain() for v in verdicts if not v.passed) or "all verdicts passed"
