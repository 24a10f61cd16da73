"""The scheduler's work, probed as a user's pod meets it: a held lease and /healthz say a kube-scheduler runs, not
that it binds (a leader whose profile serves another scheduler name, or whose bindings are refused, leads and binds
nothing).

Two workers, each one probe at a time, so that a probe is asked for about every PROBE_PERIOD_S even while one waits
out a failover: `work.binding` creates a pod for the default scheduler on the cluster's hollow nodes (their label
and their taint tolerated: nothing of the owner's is touched) and ends when the pod is bound to a node; the pod is
then deleted without waiting (kwok plays it, and the namespace goes at the monitor's stop). Only the scheduler binds
a pod that names no node, so the probe's figure is the scheduler's alone, with no controller in its path. Recorded
as harness/monitors/work_probes.py says; harness/checkers/work.py judges it.

It needs nodes to bind to: only a cluster with hollow nodes (Capability.HOLLOW_NODES) has nodes that are Quorum's.
"""

from __future__ import annotations

from kubernetes import client as k8s

from harness.checkers.work import BINDING_PROBE
from harness.components.kwok import HOLLOW_LABEL
from harness.history import History
from harness.load.hollow import HOLLOW_TOLERATION
from harness.monitors.work_probes import (API_ERRORS, LABEL, PROBE_DEADLINE_S, REQUEST_TIMEOUT_S, WorkProbes,
                                          needs_hollow_nodes)
from harness.target.protocol import Target

PROBE_PERIOD_S = 2.0  # a new work.binding probe about every 2 s: a failover's figure is read to about that
DEFAULT_SCHEDULER = "default-scheduler"  # what a pod that names no scheduler asks for


class BindingMonitor(WorkProbes):
    """The scheduler's binding, probed continuously (module docstring); what the work-resumed checker reads with
    `probe="work.binding"`."""

    name = "binding"
    probes = (BINDING_PROBE,)
    resumed_op = BINDING_PROBE

    def __init__(self, cluster: Target, history: History, *, period_s: float = PROBE_PERIOD_S,
                 deadline_s: float = PROBE_DEADLINE_S, **limits) -> None:
        needs_hollow_nodes(cluster, "nothing of Quorum's for its scheduler to bind a pod to")
        # each worker asks every 2 x period_s, the two offset by period_s
        super().__init__(cluster, history, rate=1 / period_s, workers=2, deadline_s=deadline_s, **limits)
        self._seq = [0, 0]

    def step(self, worker: int) -> None:
        self._seq[worker] += 1
        name = f"b{worker}-{self._seq[worker]:05d}"
        self._probe(BINDING_PROBE, name, lambda: self._create_pod(name), lambda: self._bound(name),
                    f"pod {name} bound to a node")
        try:
            self._core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0,
                                             _request_timeout=REQUEST_TIMEOUT_S)
        except API_ERRORS:
            pass  # the namespace's deletion at the stop takes it

    def _create_pod(self, name: str) -> None:
        body = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name=name, labels={LABEL: name}),
            spec=k8s.V1PodSpec(
                scheduler_name=DEFAULT_SCHEDULER, automount_service_account_token=False,
                node_selector={HOLLOW_LABEL: "true"}, tolerations=[k8s.V1Toleration(**HOLLOW_TOLERATION)],
                containers=[k8s.V1Container(name="idle", image="quorum.invalid/idle:never-pulled")]))
        self._core.create_namespaced_pod(self.namespace, body, _request_timeout=REQUEST_TIMEOUT_S)

    def _bound(self, name: str) -> bool:
        pod = self._core.read_namespaced_pod(name, self.namespace, _request_timeout=REQUEST_TIMEOUT_S)
        return bool(pod.spec.node_name)
