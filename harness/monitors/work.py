"""The controllers' work, probed as a user's objects meet it: a health endpoint and a held lease say a
controller-manager runs, not that it reconciles (kubernetes#125530: a leader on a stale connection kept its lease and
did nothing).

Three workers, each one probe at a time, in a namespace of the monitor's own:
- `work.replicas` (two workers, so that a probe is asked for every PROBE_PERIOD_S or so even while one waits out a
  failover: the first asked for after a fault times the work's return): a Deployment of REPLICAS pods is created,
  and the probe ends when its pods exist (the deployment controller made a ReplicaSet and the replicaset controller
  its pods); then the Deployment is deleted with background propagation, and `work.collect` ends when its
  ReplicaSet and pods are gone (the garbage collector);
- `work.namespace`: a namespace is created and deleted, and the probe ends when it is gone (the namespace
  controller empties and finalizes it).

The pods name a scheduler nobody runs, so they stay Pending whatever the cluster's nodes: the probe asks for the
controller-manager's work only, and adds no scheduler load (the scheduler's work is harness/monitors/binding.py's).
Each probe waits at most PROBE_DEADLINE_S and is recorded as harness/monitors/work_probes.py says.
"""

from __future__ import annotations

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from harness.checkers.work import COLLECT_PROBE, CONTROLLER_PROBES, NAMESPACE_PROBE, REPLICAS_PROBE
from harness.history import History
from harness.monitors.work_probes import LABEL, PROBE_DEADLINE_S, REQUEST_TIMEOUT_S, WorkProbes
from harness.target.protocol import Target

REPLICAS = 2
PROBE_PERIOD_S = 2.0  # a new work.replicas probe about every 2 s: a failover's figure is read to about that
WORK_CHECK_PERIOD_S = 1.0  # without a fault, twice as often: the samples a check needs in a few seconds
NOBODYS_SCHEDULER = "quorum-nobody"  # no scheduler serves it: the pods stay Pending


class WorkMonitor(WorkProbes):
    """The controller-manager's work, probed continuously (module docstring); what the work-resumed checker reads."""

    name = "work"
    probes = CONTROLLER_PROBES
    resumed_op = REPLICAS_PROBE

    def __init__(self, cluster: Target, history: History, *, period_s: float = PROBE_PERIOD_S,
                 deadline_s: float = PROBE_DEADLINE_S, **limits) -> None:
        # each worker asks every 2 x period_s; the two replicas workers are offset, one probe per period_s between them
        super().__init__(cluster, history, rate=3 / (2 * period_s), workers=3, deadline_s=deadline_s, **limits)
        self._apps = k8s.AppsV1Api(self._client)
        self._seq = [0, 0, 0]

    def step(self, worker: int) -> None:
        self._seq[worker] += 1
        name = f"w{worker}-{self._seq[worker]:05d}"
        if worker < 2:
            if self._probe(REPLICAS_PROBE, name, lambda: self._create_deployment(name),
                           lambda: self._pods(name) >= REPLICAS, f"{REPLICAS} pods of Deployment {name}"):
                self._probe(COLLECT_PROBE, name, lambda: self._delete_deployment(name),
                            lambda: self._pods(name) == 0 and self._replica_sets(name) == 0,
                            f"Deployment {name}'s ReplicaSet and pods collected")
        else:
            namespace = f"{self.namespace}-{name}"
            self._probe(NAMESPACE_PROBE, namespace, lambda: self._create_and_delete_namespace(namespace),
                        lambda: not self._namespace_exists(namespace), f"namespace {namespace} deleted")

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

