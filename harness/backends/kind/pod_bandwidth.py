"""Pod-to-pod bandwidth on kind: an iperf3 server pod pinned to one node and a client pod pinned to another,
so the traffic takes the path pods really take (pod veth, the node, Quorum's CNI routes, the other node); or,
via_service, to the server through a ClusterIP Service named by its DNS name (CoreDNS, then kube-proxy's DNAT).

The pods run the locally built iperf3 image (harness/backends/kind/images.py), which `quorum up` loads into every node;
they are pinned with nodeName (no scheduler involved) and never pull. Both are deleted afterwards, whatever
happened."""

from __future__ import annotations

import json
import secrets
import statistics
import time
from dataclasses import dataclass

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from harness.backends.docker import base_image
from harness.errors import QuorumError
from harness.backends.kind.target import KindTarget
from harness.backends.kind.images import iperf3_tag
from harness.monitors.kube_writer import api_client
from harness.wait import until

NAMESPACE = "default"
IPERF_PORT = 5201
POD_START_TIMEOUT_S = 90.0
CLIENT_ATTEMPTS = 5  # a client that raced the server's listen is started again


class PodBandwidthError(QuorumError):
    pass


@dataclass(frozen=True)
class Iperf3Figures:
    sustained_gbit_per_s: float  # the median of the sender's one-second intervals
    mean_gbit_per_s: float  # what the receiver got over the whole run
    retransmits: int | None


@dataclass(frozen=True)
class PodBandwidth:
    sender: str
    receiver: str
    gbit_per_s: float  # sustained: the median one-second interval (docs/scenarios.md says why it is judged)
    mean_gbit_per_s: float  # what the receiver got over the whole run
    retransmits: int | None


def iperf3_image(cluster: KindTarget) -> str:
    """The iperf3 image `quorum up` loaded into the cluster's nodes (its tag follows the base image's recipe)."""
    image = iperf3_tag(base_image.Recipe().tag)
    node = cluster.hosts()[0]
    if image not in cluster.exec(node, ["ctr", "--namespace=k8s.io", "images", "list", "-q"]).split():
        raise PodBandwidthError(f"{image} is not in node {node}'s containerd",
                                "the cluster predates this iperf3 image: quorum down, then quorum up again")
    return image


def _pod(name: str, node: str, image: str, args: list[str]) -> k8s.V1Pod:
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name=name, labels={"app.kubernetes.io/managed-by": "quorum", "quorum-pod": name}),
        spec=k8s.V1PodSpec(
            node_name=node, restart_policy="Never", termination_grace_period_seconds=0,
            tolerations=[k8s.V1Toleration(operator="Exists")],  # control-plane nodes are tainted
            containers=[k8s.V1Container(name="iperf3", image=image, image_pull_policy="Never", args=args)]))


def _wait_for(core: k8s.CoreV1Api, name: str, phases: set[str], timeout_s: float) -> k8s.V1Pod:
    pod = None

    def settled() -> str | None:
        """Whether the pod is in one of `phases` ("there") or never will be ("ended")."""
        nonlocal pod
        pod = core.read_namespaced_pod(name, NAMESPACE, _request_timeout=10)
        if pod.status.phase in phases and (pod.status.phase != "Running" or pod.status.pod_ip):
            return "there"
        return "ended" if pod.status.phase in ("Failed", "Succeeded") else None

    if until(settled, timeout_s, 1.0).value == "there":
        return pod
    state = pod.status.container_statuses if pod is not None else None
    raise PodBandwidthError(f"pod {name} is not {'/'.join(sorted(phases))} within {timeout_s:.0f} s: "
                            f"phase {pod.status.phase if pod else '?'}, containers {state}",
                            "kubectl describe pod shows why (an image that was not loaded says ErrImageNeverPull)")


def _delete(core: k8s.CoreV1Api, name: str) -> None:
    try:
        core.delete_namespaced_pod(name, NAMESPACE, grace_period_seconds=0, _request_timeout=10)
    except ApiException as error:
        if error.status != 404:
            raise


def parse_iperf3(output: str) -> Iperf3Figures:
    """The median one-second interval, Gbit/s the receiver got and the sender's retransmits, from `iperf3 -J`
    output; raises with iperf3's own error when it reports one."""
    try:
        result = json.loads(output)
    except ValueError:
        raise PodBandwidthError(f"iperf3 printed no JSON: {output[-300:]!r}", "kubectl logs shows the client") from None
    if result.get("error"):
        raise PodBandwidthError(f"iperf3: {result['error']}", "kubectl logs shows the client")
    end = result.get("end", {})
    received = end.get("sum_received", {}).get("bits_per_second")
    if received is None:
        raise PodBandwidthError("iperf3's report has no received total", "kubectl logs shows the client")
    intervals = [i["sum"]["bits_per_second"] for i in result.get("intervals", []) if "bits_per_second" in i.get("sum", {})]
    sustained = statistics.median(intervals) if intervals else received
    return Iperf3Figures(sustained / 1e9, received / 1e9, end.get("sum_sent", {}).get("retransmits"))


def _service(name: str, pod: str) -> k8s.V1Service:
    return k8s.V1Service(metadata=k8s.V1ObjectMeta(name=name, labels={"app.kubernetes.io/managed-by": "quorum"}),
                         spec=k8s.V1ServiceSpec(selector={"quorum-pod": pod},
                                                ports=[k8s.V1ServicePort(port=IPERF_PORT, target_port=IPERF_PORT)]))


def pod_to_pod(cluster: KindTarget, sender: str, receiver: str, seconds: float = 5.0, *,
               via_service: bool = False) -> PodBandwidth:
    """TCP throughput from a pod on node `sender` to a pod on node `receiver` (short names: worker, worker2);
    via_service: to the DNS name of a ClusterIP Service in front of the receiving pod, not to the pod's address."""
    core = k8s.CoreV1Api(api_client(cluster))
    image, tag = iperf3_image(cluster), secrets.token_hex(3)
    server, names, service = f"quorum-iperf3-server-{tag}", [], None
    try:
        names.append(server)
        core.create_namespaced_pod(NAMESPACE, _pod(server, cluster.container(receiver), image, ["-s", "-p", str(IPERF_PORT)]),
                                   _request_timeout=10)
        address = _wait_for(core, server, {"Running"}, POD_START_TIMEOUT_S).status.pod_ip
        if via_service:
            service = f"quorum-iperf3-{tag}"
            core.create_namespaced_service(NAMESPACE, _service(service, server), _request_timeout=10)
            address = f"{service}.{NAMESPACE}.svc.cluster.local"
        problem = ""
        for attempt in range(CLIENT_ATTEMPTS):
            name = f"quorum-iperf3-client-{tag}-{attempt}"
            names.append(name)
            args = ["-c", address, "-p", str(IPERF_PORT), "-t", f"{seconds:g}", "-J", "--connect-timeout", "3000"]
            core.create_namespaced_pod(NAMESPACE, _pod(name, cluster.container(sender), image, args), _request_timeout=10)
            _wait_for(core, name, {"Succeeded", "Failed"}, POD_START_TIMEOUT_S + seconds)
            output = core.read_namespaced_pod_log(name, NAMESPACE, _request_timeout=10)
            try:
                figures = parse_iperf3(output)
                return PodBandwidth(sender, receiver, figures.sustained_gbit_per_s, figures.mean_gbit_per_s,
                                    figures.retransmits)
            except PodBandwidthError as error:
                problem = str(error)
                time.sleep(1)
        raise PodBandwidthError(f"iperf3 pod {sender} -> {'service of ' if via_service else ''}pod {receiver} failed "
                                f"{CLIENT_ATTEMPTS} times: {problem}",
                                "kubectl get pods -o wide; kubectl logs <client pod>")
    finally:
        for name in names:
            _delete(core, name)
        if service is not None:
            try:
                core.delete_namespaced_service(service, NAMESPACE, _request_timeout=10)
            except ApiException as error:
                if error.status != 404:
                    raise
