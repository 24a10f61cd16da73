"""What every work monitor shares: a namespace of its own, and the probe record.

A work probe asks the control plane for something only a component doing its work can give (a ReplicaSet, a bound
pod, a namespace finalized), then waits for it. One record per probe, from the ask to the work seen done (OK), to
the probe's deadline (FAIL, with what was missing), or to the monitor's stop (UNKNOWN and `pending`: how long the work
had waited is still evidence, harness/checkers/work.py reads it). An ask the API refused or did not answer never
reached the component: UNKNOWN, not its work's figure.

Every namespace a work monitor creates is labelled LABEL and names the harness process that made it (OWNER): a harness
killed outright leaves them behind, and `quorum heal` deletes those of a harness that no longer runs
(harness/monitors/work_leftovers.py).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import asdict

import urllib3
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from harness.errors import Unsupported
from harness.history import History, Outcome, now
from harness.monitors.base import Monitor
from harness.monitors.kube_writer import api_client
from harness.run.harness_process import Harness
from harness.target.protocol import Target
from harness.wait import eventually, until

LABEL = "quorum.io/work"
OWNER = "quorum.io/work-owner"  # annotation: the Harness that created the namespace, as JSON
# longer than any failover the objectives allow (a lease's 24.3 s + start-up), so a probe in flight during one ends
# with the work done, and its completion says when the work resumed
PROBE_DEADLINE_S = 90.0
POLL_S = 0.25
REQUEST_TIMEOUT_S = 5.0
SERVICE_ACCOUNT_WAIT_S = 10.0  # at most, for the monitor's namespace's default ServiceAccount (setup)
API_ERRORS = (ApiException, urllib3.exceptions.HTTPError, OSError)


class WorkProbes(Monitor):
    """A monitor whose steps are work probes (module docstring), in a namespace it creates at start and deletes at
    its stop. `probes` names the monitor's probes; `resumed_op` is the one that `wait_for_work_after` waits for."""

    probes: tuple[str, ...] = ()
    resumed_op = ""

    def __init__(self, cluster: Target, history: History, *, rate: float, workers: int,
                 deadline_s: float = PROBE_DEADLINE_S, **limits) -> None:
        super().__init__(cluster, history, rate=rate, workers=workers, **limits)
        self.deadline_s = deadline_s
        self.tag = secrets.token_hex(3)
        self.namespace = f"quorum-work-{self.tag}"
        self._client = api_client(cluster)
        self._core = k8s.CoreV1Api(self._client)
        self._undeleted: set[str] = set()  # namespaces created whose delete the API did not take
        self._waiting: dict[str, tuple[str, float]] = {}  # thread name -> the probe it waits on, and when it asked
        self._owner = json.dumps(asdict(Harness.this()))

    def setup(self) -> None:
        super().setup()
        self._core.create_namespace(self._namespace(self.namespace), _request_timeout=REQUEST_TIMEOUT_S * 2)
        # a pod is refused until its namespace's default ServiceAccount exists (the ServiceAccount admission plugin),
        # which the serviceaccount controller creates: the probes start once it does, so that the first ones time
        # their own work, not the new namespace's (bounded: without it they are slow, never blocked)
        until(self._default_service_account, SERVICE_ACCOUNT_WAIT_S, POLL_S)

    def wait_for_work_after(self, t: float, timeout_s: float) -> bool:
        """Until a `resumed_op` probe asked for at or after `t` (monotonic) saw its work done; whether one did within
        `timeout_s` (the checker judges the record either way)."""
        return eventually(lambda: any(op.ok and op.invoke >= t for op in self.history.ops_of(self.resumed_op)),
                          timeout_s, POLL_S)

    def wait_for_each_after(self, t: float, timeout_s: float) -> bool:
        """Until each of the monitor's probes asked for at or after `t` (monotonic) saw its work done once; whether
        they did within `timeout_s` (the checker judges the record either way)."""
        return eventually(lambda: all(any(op.ok and op.invoke >= t for op in self.history.ops_of(probe))
                                      for probe in self.probes), timeout_s, POLL_S)

    def wait_for_samples(self, samples: int, timeout_s: float, *, late_after_s: dict[str, float] | None = None
                         ) -> bool:
        """Until each of the monitor's probes saw its work done `samples` times, or, with `late_after_s` (a bound per
        probe), until a probe still waiting has waited past its bound: work-done fails on that wait whatever comes
        after, so waiting on for samples would only cost time. Whether the samples came within `timeout_s` (the
        checker judges the record either way)."""
        def sampled() -> bool:
            return all(sum(op.ok for op in self.history.ops_of(probe)) >= samples for probe in self.probes)

        def decided() -> bool:
            return sampled() or (late_after_s is not None and self.waiting_past(late_after_s))

        eventually(decided, timeout_s, POLL_S)
        return sampled()

    def waiting_past(self, bounds_s: dict[str, float]) -> bool:
        """Whether a probe in flight, of those `bounds_s` names, has waited for its work longer than its bound."""
        moment = now()
        return any(op in bounds_s and moment - invoke > bounds_s[op] for op, invoke in list(self._waiting.values()))

    def finish(self) -> None:
        """Remove the monitor's namespaces; their deletion goes on in the cluster (nothing waits for it)."""
        for namespace in [self.namespace, *sorted(self._undeleted)]:
            try:
                self._core.delete_namespace(namespace, _request_timeout=REQUEST_TIMEOUT_S)
            except API_ERRORS:
                pass

    def _probe(self, op: str, value: str, act: Callable[[], None], done: Callable[[], bool], what: str) -> bool:
        """Act, then wait for the work; one record (module docstring). Whether the work was seen done."""
        invoke = now()
        try:
            act()
        except API_ERRORS as error:
            self.history.record(self.name, op, "lb", invoke, Outcome.UNKNOWN, value=value, error=reason(error))
            return False
        errors: list[str] = []

        def finished() -> bool:
            if self._stop.is_set():
                return True
            try:
                return done()
            except API_ERRORS as exc:
                errors.append(reason(exc))
                return False

        self._waiting[threading.current_thread().name] = (op, invoke)
        try:
            waited = until(finished, self.deadline_s, POLL_S)
        finally:
            self._waiting.pop(threading.current_thread().name, None)
        if waited.held and not self._stop.is_set():
            self.history.record(self.name, op, "lb", invoke, Outcome.OK, value=value)
            return True
        last = f" (last error {errors[-1]})" if errors else ""
        if self._stop.is_set():
            self.history.record(self.name, op, "lb", invoke, Outcome.UNKNOWN, value=value, pending=True,
                                error=f"the monitor stopped {waited.after_s:.1f} s in, before {what}{last}")
        else:
            self.history.record(self.name, op, "lb", invoke, Outcome.FAIL, value=value,
                                error=f"not done within {waited.after_s:.1f} s: {what}{last}")
        return False

    def _default_service_account(self) -> bool:
        try:
            self._core.read_namespaced_service_account("default", self.namespace, _request_timeout=REQUEST_TIMEOUT_S)
        except API_ERRORS:
            return False
        return True

    def _namespace(self, name: str) -> k8s.V1Namespace:
        return k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels={LABEL: self.tag},
                                                         annotations={OWNER: self._owner}))


def needs_hollow_nodes(cluster: Target, what: str) -> None:
    """Unsupported unless the cluster has hollow nodes of Quorum's: `what` a monitor would do with them."""
    if not cluster.hollow_nodes():
        raise Unsupported(f"{cluster.name} has no hollow nodes: {what}",
                          "give the topology hollow_nodes (or the inventory, on a disposable target)")


def reason(error: Exception) -> str:
    """An API error as a record says it: the HTTP status, or the kind of connection error."""
    if isinstance(error, ApiException):
        return f"HTTP {error.status} {error.reason}"
    return type(error).__name__
