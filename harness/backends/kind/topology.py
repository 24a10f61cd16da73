"""A kind topology file (clusters/kind.yaml): how many control-plane and worker nodes, the subnet of the
Quorum-owned Docker network they join, and, for broken twins only, deliberate defects."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from harness.errors import TopologyError
from harness.toolchain.versions import KUBERNETES_DEFAULT
from harness.topology import (EtcdSettings, LeaderElection, Network, Strict, Topology, read_topology_file,
                              validated)
from harness.userfile import read_yaml
from harness.validation import TopologyName


class KindNodes(Strict):
    control_planes: int = Field(3, ge=1, le=5, description="control-plane nodes (kubeadm static pods, stacked etcd)")
    workers: int = Field(2, ge=0, le=5)
    self_hosted: bool = Field(False, description="kube-apiserver as a DaemonSet, kube-controller-manager and "
                                                 "kube-scheduler as Deployments, bootstrapped from kubeadm's static "
                                                 "pods, which then leave (etcd stays a static pod)")

    @property
    def nodes(self) -> int:
        return self.control_planes + self.workers


class KindLoadBalancer(Strict):
    """How the balancer in front of the apiservers is configured, in the terms of kind's Envoy (written into its
    xDS files after kind renders them; docs/backends.md). The defaults are Quorum's reference, what the process
    backend's HAProxy does; kind's own are /healthz, false and 1. The check's timing stays kind's."""

    # the endpoints an anonymous check may read on Quorum's hardened apiservers (harness/components/apiserver.py)
    health_check_path: Literal["/readyz", "/livez", "/healthz"] = Field(
        "/readyz", description="the URL path each apiserver is checked on (kind: /healthz)")
    close_connections_on_failure: bool = Field(
        True, description="close the connections to an apiserver the check marks down (Envoy's "
                          "close_connections_on_host_health_failure; kind: false)")
    connect_attempts: int = Field(
        3, ge=1, le=10, description="attempts to connect a client, each to the next apiserver, before giving up "
                                    "(Envoy's tcp_proxy max_connect_attempts; kind: 1)")


class KindDefects(Strict):
    """Deliberate defects for broken twins (clusters/defects/kind-*.yaml). Never set these on a cluster you trust."""

    kubelet_disabled_at_boot: bool = Field(
        False, description="the kubelet unit is not enabled: a rebooted node never starts its static pods")
    static_pods_restart_never: bool = Field(
        False, description="the control-plane manifests say restartPolicy: Never: an exited static pod stays down")
    lb_without_health_checks: bool = Field(
        False, description="kind's load balancer keeps sending requests to apiservers that are down")
    worker_link_mbit: int | None = Field(
        None, ge=1, le=100_000, description="every worker's link is throttled to this rate (tbf on its eth0)")
    control_plane_untainted: bool = Field(
        False, description="kubeadm's nodeRegistration says `taints: []` on every node: the control-plane nodes take "
                           "ordinary workloads")
    static_pods_without_priority: bool = Field(
        False, description="the control-plane manifests set no priority class and no resources, as hand-written "
                           "static pods often do: the control plane runs at priority 0 with no CPU request")
    kubeadm_defaults: bool = Field(
        False, description="kubeadm's own layout: each apiserver lists only its node's etcd member, and anonymous "
                           "clients may read more than the health endpoints (/version)")
    no_checkpointer: bool = Field(
        False, description="a self-hosted control plane without its pod checkpointer: after a power loss of every "
                           "control-plane node nothing starts the apiserver")
    apiserver_updated_in_place: bool = Field(
        False, description="one self-hosted apiserver per node: its DaemonSet's update stops the old pod before the "
                           "new one runs (maxUnavailable 1, no surge) and no PodDisruptionBudget guards it")
    checkpointer_never_collects: bool = Field(
        False, description="the pod checkpointer never removes a checkpoint: an upgraded apiserver's old checkpoint "
                           "stays on the node, and the next power loss starts it again")
    checkpointer_never_refreshes: bool = Field(
        False, description="the pod checkpointer copies a checkpointed pod's secrets only when the pod's spec "
                           "changed: a changed secret is never refreshed, and a power loss brings the old one back")
    checkpointer_presence_lock: bool = Field(
        False, description="the pod checkpointer's lock is its lock file's existence, removed only at a clean exit: "
                           "a checkpointer killed while the API is down leaves it behind, and the restarted one waits "
                           "for it forever, so its checkpoints are never handed back")


class KindTopology(Strict):
    name: TopologyName
    backend: Literal["kind"] = Field(description="marks a kind topology; the value is always kind")
    kubernetes: str = KUBERNETES_DEFAULT  # the node image's release: kubelet, kubeadm and the control plane
    disposable: bool = False
    network: Network
    kind: KindNodes = KindNodes()
    load_balancer: KindLoadBalancer = KindLoadBalancer()
    defects: KindDefects = KindDefects()

    @property
    def checkpointer(self) -> bool:
        """A self-hosted control plane has its pod checkpointer, unless a twin leaves it out."""
        return self.kind.self_hosted and not self.defects.no_checkpointer

    @property
    def leader_election(self) -> LeaderElection:
        """kubeadm runs kube-controller-manager and kube-scheduler with --leader-elect=true and no timing flags,
        and Quorum adds none: the upstream defaults (15/10/2 s) that the failover bounds derive from."""
        return LeaderElection()

    @property
    def etcd(self) -> EtcdSettings:
        """kubeadm's stacked etcd: TLS for clients and peers, and no --heartbeat-interval or --election-timeout,
        so etcd's own defaults (100 ms, 1000 ms) that the etcd bounds derive from."""
        return EtcdSettings()

    _supported = field_validator("kubernetes")(Topology.supported_version.__func__)

    @model_validator(mode="after")
    def _defects_fit_the_cluster(self) -> "KindTopology":
        if self.defects.no_checkpointer and not self.kind.self_hosted:
            raise ValueError("defects.no_checkpointer leaves out the checkpointer of a self-hosted control plane, but "
                             "kind.self_hosted is false: set it or drop the defect")
        if self.defects.apiserver_updated_in_place and not self.kind.self_hosted:
            raise ValueError("defects.apiserver_updated_in_place changes how a self-hosted apiserver is updated, but "
                             "kind.self_hosted is false: set it or drop the defect")
        for defect in ("checkpointer_never_collects", "checkpointer_never_refreshes", "checkpointer_presence_lock"):
            if getattr(self.defects, defect) and not self.checkpointer:
                raise ValueError(f"defects.{defect} changes the pod checkpointer, but this cluster has none "
                                 "(kind.self_hosted false, or defects.no_checkpointer): drop one of them")
        if self.defects.worker_link_mbit and not self.kind.workers:
            raise ValueError("defects.worker_link_mbit throttles the workers' links, but kind.workers is 0: "
                             "add workers or drop the defect")
        return self


def is_kind_topology(path: str | Path) -> bool:
    try:
        data = read_yaml(path, TopologyError, "topology file", "clusters/kind.yaml")
    except TopologyError:
        return False  # not a topology at all: the loader that reads it says why
    return isinstance(data, dict) and data.get("backend") == "kind"


def load_kind_topology(path: str | Path) -> KindTopology:
    data = read_topology_file(path, "clusters/kind.yaml")
    if not isinstance(data, dict) or data.get("backend") != "kind":
        raise TopologyError(f"{path} is not a kind topology (it has no `backend: kind`)",
                            "with --backend kind use a kind topology such as clusters/kind.yaml")
    return validated(KindTopology, data, str(path), "clusters/kind.yaml")
