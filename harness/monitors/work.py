"""The controllers' work, probed as a user's objects meet it: a health endpoint and a held lease say a
controller-manager runs, not that it reconciles (kubernetes#125530: a leader on a stale connection kept its lease and
did nothing).

Three workers, each one probe at a time, in a namespace of the monitor's own:
- `work.replicas` (two workers, so that a probe is asked for every PROBE_PERIOD_S or so even while one waits out a
  failover: the first asked for after a fault times the work's return): a Deployment of REPLICAS pods is created, and the probe ends when its pods exist (the deployment
  controller made a ReplicaSet and the replicaset controller its pods); then the Deployment is deleted with
  background propagation, and `work.collect` ends when its ReplicaSet and pods are gone (the garbage collector);
- `work.namespace`: a namespace is created and deleted, and the probe ends when it is gone (the namespace
  controller empties and finalizes it).

The pods name a scheduler nobody runs, so they stay Pending whatever the cluster's nodes: the probe asks for the
controller-manager's work only, and adds no scheduler load. Each probe waits at most PROBE_DEADLINE_S; one that
ends without its work done is recorded FAIL with what was missing, and one the monitor's stop cut short UNKNOWN and
`pending` (harness/checkers/work.py reads how long its work had waited).

Every namespace it creates names the harness process that made it (OWNER): a harness killed outright leaves them
behind, and `quorum heal` deletes those of a harness that no longer runs (harness/monitors/work_leftovers.py).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import asdict

import urllib3
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from harness.history import History, Outcome, now
from harness.monitors.base import Monitor
from harness.monitors.kube_writer import api_client
from harness.run.harness_process import Harness
from harness.target.protocol import Target
from harness.wait import eventually, until

LABEL = "quorum.io/work"
OWNER = "quorum.io/work-owner"  # annotation: the Harness that created the namespace, as JSON
REPLICAS = 2
PROBE_PERIOD_S = 2.0  # a new work.replicas probe about every 2 s: a failover's figure is read to about that
# longer than any failover the objectives allow (a lease's 24.3 s + start-up), so a probe in flight during one ends
# with the work done, and its completion says when the work resumed
PROBE_DEADLINE_S = 90.0
POLL_S = 0.25
REQUEST_TIMEOUT_S = 5.0
NOBODYS_SCHEDULER = "quorum-nobody"  # no scheduler serves it: the pods stay Pending


class WorkMonitor(Monitor):
    """The controller-manager's work, probed continuously (module docstring); what the work-resumed checker reads."""

    name = "work"

    def __init__(self, cluster: Target, history: History, *, period_s: float = PROBE_PERIOD_S,
                 deadline_s: float = PROBE_DEADLINE_S, **limits) -> None:
        # each worker asks every 2 x period_s; the two replicas workers are offset, one probe per period_s between them
        super().__init__(cluster, history, rate=3 / (2 * period_s), workers=3, **limits)
        self.deadline_s = deadline_s
        self.tag = secrets.token_hex(3)
        self.namespace = f"quorum-work-{self.tag}"
        self._client = api_client(cluster)
        self._core = k8s.CoreV1Api(self._client)
        self._apps = k8s.AppsV1Api(self._client)
        self._seq = [0, 0, 0]
        self._undeleted: set[str] = set()  # probe namespaces created whose delete the API did not take
        self._owner = json.dumps(asdict(Harness.this()))

    def setup(self) -> None:
        super().setup()
        self._core.create_namespace(self._namespace(self.namespace), _request_timeout=REQUEST_TIMEOUT_S * 2)

    def step(self, worker: int) -> None:
        self._seq[worker] += 1
        name = f"w{worker}-{self._seq[worker]:05d}"
        if worker < 2:
            if self._probe("work.replicas", name, lambda: self._create_deployment(name),
                           lambda: self._pods(name) >= REPLICAS, f"{REPLICAS} pods of Deployment {name}"):
                self._probe("work.collect", name, lambda: self._delete_deployment(name),
                            lambda: self._pods(name) == 0 and self._replica_sets(name) == 0,
                            f"Deployment {name}'s ReplicaSet and pods collected")
        else:
            namespace = f"{self.namespace}-{name}"
            self._probe("work.namespace", namespace, lambda: self._create_and_delete_namespace(namespace),
                        lambda: not self._namespace_exists(namespace), f"namespace {namespace} deleted")

    def wait_for_work_after(self, t: float, timeout_s: float) -> bool:
        """Until a `work.replicas` probe asked for at or after `t` (monotonic) saw its work done; whether one did
        within `timeout_s` (the checker judges the record either way)."""
        return eventually(lambda: any(op.ok and op.invoke >= t for op in self.history.ops_of("work.replicas")),
                          timeout_s, POLL_S)

    def finish(self) -> None:
        """Remove the monitor's namespaces; their deletion goes on in the cluster (nothing waits for it)."""
        for namespace in [self.namespace, *sorted(self._undeleted)]:
            try:
                self._core.delete_namespace(namespace, _request_timeout=REQUEST_TIMEOUT_S)
            except (ApiException, urllib3.exceptions.HTTPError, OSError):
                pass

    def _probe(self, op: str, value: str, act: Callable[[], None], done: Callable[[], bool], what: str) -> bool:
        """Act, then wait for the work; one record from the act's start to the work seen done (OK), the deadline
        (FAIL), or the monitor's stop (UNKNOWN, `pending`: how long the work had waited is still evidence)."""
        invoke = now()
        try:
            act()
        except (ApiException, urllib3.exceptions.HTTPError, OSError) as error:
            # the act never reached the controllers (the API refused or did not answer): not their work's figure
            self.history.record(self.name, op, "lb", invoke, Outcome.UNKNOWN, value=value, error=_reason(error))
            return False
        errors: list[str] = []

        def finished() -> bool:
            if self._stop.is_set():
                return True
            try:
                return done()
            except (ApiException, urllib3.exceptions.HTTPError, OSError) as exc:
                errors.append(_reason(exc))
                return False

        waited = until(finished, self.deadline_s, POLL_S)
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

    def _namespace(self, name: str) -> k8s.V1Namespace:
        return k8s.V1Namespace(metadata=k8s.V1ObjectMeta(name=name, labels={LABEL: self.tag},
                                                         annotations={OWNER: self._owner}))

    def _selector(self, name: str) -> str:
        return f"{LABEL}={name}"

    def _create_deployment(self, name: str) -> None:
        labels = {LABEL: name}
        pod = k8s.V1PodTemplateSpec(
            metadata=k8s.V1ObjectMeta(labels=labels),
            spec=k8s.V1PodSpec(scheduler_name=NOBODYS_SCHEDULER, automount_service_account_token=False,
                               containers=[k8s.V1Container(name="idle", image="quorum.invalid/idle:never-pulled")]))
        body = k8s.V1Deployment(metadata=k8s.V1ObjectMeta(name=name, labels=labels), spec=k8s.V1DeploymentSpec(
            replicas=REPLICAS, selector=k8s.V1LabelSelector(match_labels=labels), template=pod))
        self._apps.create_namespaced_deployment(self.namespace, body, _request_timeout=REQUEST_TIMEOUT_S)

    def _delete_deployment(self, name: str) -> None:
        self._apps.delete_namespaced_deployment(name, self.namespace, propagation_policy="Background",
                                                _request_timeout=REQUEST_TIMEOUT_S)

    def _pods(self, name: str) -> int:
        pods = self._core.list_namespaced_pod(self.namespace, label_selector=self._selector(name),
                                              _request_timeout=REQUEST_TIMEOUT_S)
        return len(pods.items)

    def _replica_sets(self, name: str) -> int:
        sets = self._apps.list_namespaced_replica_set(self.namespace, label_selector=self._selector(name),
                                                      _request_timeout=REQUEST_TIMEOUT_S)
        return len(sets.items)

    def _create_and_delete_namespace(self, namespace: str) -> None:
        self._core.create_namespace(self._namespace(namespace), _request_timeout=REQUEST_TIMEOUT_S)
        self._undeleted.add(namespace)
        self._core.delete_namespace(namespace, _request_timeout=REQUEST_TIMEOUT_S)
        self._undeleted.discard(namespace)

    def _namespace_exists(self, namespace: str) -> bool:
        try:
            self._core.read_namespace(namespace, _request_timeout=REQUEST_TIMEOUT_S)
        except ApiException as error:
            if error.status == 404:
                return False
            raise
        return True


def _reason(error: Exception) -> str:
    if isinstance(error, ApiException):
        return f"HTTP {error.status} {error.reason}"
    return type(error).__name__
