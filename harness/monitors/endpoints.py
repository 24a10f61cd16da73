"""A Service's endpoints following its pods' readiness, probed as a user's Service meets it: the endpointslice
controller (in the controller-manager) lists a ready pod's address in the Service's EndpointSlice, which kube-proxy
and every other consumer of endpoints route by. A controller-manager that runs without it, or whose informers are
stuck, leaves a Service with no endpoints while its pods run.

One worker, one probe at a time: `work.endpoints` creates a pod for the default scheduler on the cluster's hollow
nodes (kwok runs it and reports it ready, with an address) and a Service selecting it, and ends when the Service's
EndpointSlice lists that pod as ready; both are then deleted without waiting (the namespace goes at the monitor's
stop). The figure holds the pod's binding and kwok's start as well: the controller cannot list a pod before it is
ready. Recorded as harness/monitors/work_probes.py says; harness/checkers/work.py judges it.

It needs nodes that run pods: only a cluster with hollow nodes (Capability.HOLLOW_NODES) has nodes that are Quorum's.
"""

from __future__ import annotations

from kubernetes import client as k8s

from harness.checkers.work import ENDPOINTS_PROBE
from harness.components.kwok import HOLLOW_LABEL
from harness.history import History
from harness.load.hollow import HOLLOW_TOLERATION
from harness.monitors.binding import DEFAULT_SCHEDULER
from harness.monitors.work_probes import (API_ERRORS, LABEL, PROBE_DEADLINE_S, REQUEST_TIMEOUT_S, WorkProbes,
                                          needs_hollow_nodes)
from harness.target.protocol import Target

PROBE_PERIOD_S = 1.0  # a new probe about every second: the samples a check needs in a few seconds
SERVICE_NAME_LABEL = "kubernetes.io/service-name"  # how an EndpointSlice names its Service (discovery.k8s.io/v1)
PORT = 8080  # a port for the Service to name; nothing listens on it (kwok plays the pod)


class EndpointsMonitor(WorkProbes):
    """The endpointslice controller's work, probed continuously (module docstring)."""

    name = "endpoints"
    probes = (ENDPOINTS_PROBE,)
    resumed_op = ENDPOINTS_PROBE

    def __init__(self, cluster: Target, history: History, *, period_s: float = PROBE_PERIOD_S,
                 deadline_s: float = PROBE_DEADLINE_S, **limits) -> None:
        needs_hollow_nodes(cluster, "no node of Quorum's to run a pod a Service could list")
        super().__init__(cluster, history, rate=1 / period_s, workers=1, deadline_s=deadline_s, **limits)
        self._discovery = k8s.DiscoveryV1Api(self._client)
        self._seq = 0

    def step(self, worker: int) -> None:
        self._seq += 1
        name = f"e-{self._seq:05d}"
        self._probe(ENDPOINTS_PROBE, name, lambda: self._create_pod_and_service(name), lambda: self._listed(name),
                    f"pod {name} ready in Service {name}'s EndpointSlice")
        for delete in (self._core.delete_namespaced_service, self._core.delete_namespaced_pod):
            try:
                delete(name, self.namespace, grace_period_seconds=0, _request_timeout=REQUEST_TIMEOUT_S)
            except API_ERRORS:
                pass  # the namespace's deletion at the stop takes it

    def _create_pod_and_service(self, name: str) -> None:
        labels = {LABEL: name}
        pod = k8s.V1Pod(
            metadata=k8s.V1ObjectMeta(name=name, labels=labels),
            spec=k8s.V1PodSpec(
                scheduler_name=DEFAULT_SCHEDULER, automount_service_account_token=False,
                termination_grace_period_seconds=0, node_selector={HOLLOW_LABEL: "true"},
                tolerations=[k8s.V1Toleration(**HOLLOW_TOLERATION)],
                containers=[k8s.V1Container(name="idle", image="quorum.invalid/idle:never-pulled")]))
        self._core.create_namespaced_pod(self.namespace, pod, _request_timeout=REQUEST_TIMEOUT_S)
        service = k8s.V1Service(metadata=k8s.V1ObjectMeta(name=name, labels=labels), spec=k8s.V1ServiceSpec(
            selector=labels, ports=[k8s.V1ServicePort(port=PORT, target_port=PORT)]))
        self._core.create_namespaced_service(self.namespace, service, _request_timeout=REQUEST_TIMEOUT_S)

    def _listed(self, name: str) -> bool:
        slices = self._discovery.list_namespaced_endpoint_slice(
            self.namespace, label_selector=f"{SERVICE_NAME_LABEL}={name}", _request_timeout=REQUEST_TIMEOUT_S)
        return any(endpoint.target_ref is not None and endpoint.target_ref.name == name
                   and endpoint.conditions is not None and endpoint.conditions.ready
                   for item in slices.items for endpoint in item.endpoints or [])
