"""A dead node's pods evicted after their toleration: the node lifecycle controller taints a node it declares NotReady
(`node.kubernetes.io/unreachable` or `not-ready`, effect NoExecute), and the taint-eviction controller deletes each pod
on it once the pod's toleration of that taint runs out (k8s.io/kubernetes pkg/controller/tainteviction). A
controller-manager running without that controller declares the node dead and leaves its pods bound to it for good.

One pod of Quorum's own, in a namespace of the monitor's (harness/monitors/work_probes.py: removed at the stop, a
killed harness's swept by `quorum heal`), bound to one hollow node by name and tolerating those taints for
`toleration_s`. About every READ_PERIOD_S the monitor reads the node and the pod: one `eviction.read` record per read,
an `eviction.tainted` event the first time the node carries a NoExecute taint of the two, an `eviction.evicted` event
the first time the pod is marked for deletion or gone. harness/checkers/eviction.py judges them.
"""

from __future__ import annotations

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from harness.checkers.eviction import EVICTED_EVENT, READ_OP, TAINTED_EVENT
from harness.components.kwok import HOLLOW_LABEL
from harness.history import History, Outcome, now
from harness.load.hollow import HOLLOW_TOLERATION
from harness.monitors.work_probes import API_ERRORS, LABEL, REQUEST_TIMEOUT_S, WorkProbes, reason
from harness.target.protocol import Target

READ_PERIOD_S = 1.0  # the taint and the deletion are each seen at most this late
# the taints the node lifecycle controller puts on a node it declares NotReady (Ready False, or Unknown when its
# heartbeats stopped)
DEAD_NODE_TAINTS = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready")
POD = "evictee"


class EvictionMonitor(WorkProbes):
    """One pod on `node` tolerating its dead-node taints for `toleration_s`, and the reads that see the taint and the
    eviction (module docstring)."""

    name = "eviction"

    def __init__(self, cluster: Target, history: History, *, node: str, toleration_s: int) -> None:
        super().__init__(cluster, history, rate=1 / READ_PERIOD_S, workers=1)
        self.node = node
        self.toleration_s = toleration_s
        self._tainted = False
        self._evicted = False

    def setup(self) -> None:
        super().setup()  # the namespace, and its default ServiceAccount (a pod is refused before it exists)
        tolerations = [k8s.V1Toleration(key=key, operator="Exists", effect="NoExecute",
                                        toleration_seconds=self.toleration_s) for key in DEAD_NODE_TAINTS]
        body = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name=POD, labels={LABEL: self.tag}),
            spec=k8s.V1PodSpec(
                node_name=self.node, automount_service_account_token=False, termination_grace_period_seconds=0,
                node_selector={HOLLOW_LABEL: "true"},
                tolerations=[k8s.V1Toleration(**HOLLOW_TOLERATION), *tolerations],
                containers=[k8s.V1Container(name="idle", image="quorum.invalid/idle:never-pulled")]))
        self._core.create_namespaced_pod(self.namespace, body, _request_timeout=REQUEST_TIMEOUT_S)
        self.history.event("eviction.pod", node=self.node, pod=f"{self.namespace}/{POD}",
                           toleration_s=self.toleration_s)

    @property
    def evicted(self) -> bool:
        return self._evicted

    def step(self, worker: int) -> None:
        invoke = now()
        try:
            node = self._core.read_node(self.node, _request_timeout=REQUEST_TIMEOUT_S)
            pod = self._read_pod()
        except API_ERRORS as error:
            self.history.record(self.name, READ_OP, "lb", invoke, Outcome.UNKNOWN, value=self.node,
                                error=reason(error))
            return
        self.history.record(self.name, READ_OP, "lb", invoke, Outcome.OK, value=self.node)
        taints = [t.key for t in node.spec.taints or [] if t.effect == "NoExecute" and t.key in DEAD_NODE_TAINTS]
        if taints and not self._tainted:
            self._tainted = True
            self.history.event(TAINTED_EVENT, t=invoke, node=self.node, taints=taints)
        if (pod is None or pod.metadata.deletion_timestamp is not None) and not self._evicted:
            self._evicted = True
            self.history.event(EVICTED_EVENT, t=invoke, node=self.node, pod=POD,
                               how="gone" if pod is None else "marked for deletion")

    def _read_pod(self) -> k8s.V1Pod | None:
        try:
            return self._core.read_namespaced_pod(POD, self.namespace, _request_timeout=REQUEST_TIMEOUT_S)
        except ApiException as error:
            if error.status == 404:
                return None
            raise
