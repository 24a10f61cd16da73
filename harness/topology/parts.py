"""Parts of a topology with no bearing on its addresses: restart policies, hollow nodes, the upgrade strategy and
the broken twins' defects."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.topology.base import Component, Strict
from harness.validation import KeyMode


class RestartPolicy(Strict):
    policy: Literal["always", "never"] = "always"
    backoff_s: float = Field(1.0, ge=0, le=3600, description="first restart delay; doubles up to max_backoff_s")
    max_backoff_s: float = Field(10.0, ge=0, le=3600)

    @model_validator(mode="after")
    def ordered(self) -> "RestartPolicy":
        if self.max_backoff_s < self.backoff_s:
            raise ValueError(f"max_backoff_s ({self.max_backoff_s}) is less than backoff_s ({self.backoff_s}); fix: "
                             "make max_backoff_s at least backoff_s (the back-off doubles from one up to the other)")
        return self


class HollowNodes(Strict):
    """Nodes without machines: kwok controllers register them, renew their Leases every 10 s and report
    status like kubelets, and mark pods bound to them Running. One kwok controller per host with the
    nodes role; the nodes are shared out evenly."""

    count: int = Field(0, ge=0, le=5000)
    pods_per_node: int = Field(0, ge=0, le=110, description="pods of the hollow-pods Deployment per node")
    create_rate_per_s: float = Field(50.0, gt=0, le=500, description="how fast Quorum creates the Node objects")
    per_controller_max: int = Field(2000, ge=1, le=5000, description="nodes one kwok controller may be given")
    node_lease_s: int = Field(40, ge=10, le=3600, description="the nodes' Lease duration; renewed at a quarter of it "
                              "(the kubelet's nodeLeaseDurationSeconds, default 40 s)")
    # Pod addresses are only strings in Pod objects (nothing routes to them); they sit inside Quorum's
    # guarded range so that anything that did try would hit the unreachable route, never the gateway.
    pod_cidr: ipaddress.IPv4Network = ipaddress.IPv4Network("10.213.192.0/18")
    # a few nodes give the scheduler somewhere to bind a user's pod; the load suite's SLOs are judged at the load
    # topology's scale, not on them
    load_suite: bool = Field(True, description="the load suite (tests marked hollow_nodes) runs on these nodes; "
                             "false: they are only for the scheduler's work, and the load suite builds --load-topology")

    @model_validator(mode="before")
    @classmethod
    def shorthand(cls, data: object) -> object:
        return {"count": data} if isinstance(data, int) else data


class UpgradeStrategy(Strict):
    """How the cluster's own tooling rolls a new release across its control plane (a self-hosted DaemonSet's
    maxUnavailable; kubeadm and Typhoon change one node at a time)."""

    max_unavailable: int = Field(1, ge=1, le=9, description="components of one kind restarted at once")


class Defects(Strict):
    """Deliberate defects for broken twins (clusters/defects/). Never set these on a cluster you mean to trust."""

    key_mode: KeyMode | None = Field(None, description="chmod every private key, e.g. \"0644\"")
    block_etcd_clients_from: list[str] = Field(default_factory=list, description="hosts denied etcd's client port")
    phantom_etcd_member: bool = Field(False, description="add an etcd member that no host runs")
    split_etcd_member: str | None = Field(
        None, description="this etcd host bootstraps a one-member cluster of its own (its --initial-cluster names only "
                          "itself); the apiservers leave it out, so the API works on the other members")
    short_lived_certificates: dict[str, Annotated[int, Field(ge=1, le=365)]] = Field(
        default_factory=dict, description="these controllers' apiserver serving certificates are issued for this many "
                                          "days (a renewal that never happened)")
    rotation_new_ca_first: bool = Field(
        False, description="this cluster's certificate rotation issues the first host's certificate from a new CA, "
                           "before any client trusts it (the order a rotation must not take)")
    scale_member_first: bool = Field(
        False, description="this cluster's scale-down removes each leaving etcd member first, while its apiserver "
                           "still serves behind the load balancer (the order a scale-down must not take)")
    scale_voter_first: bool = Field(
        False, description="this cluster's scale-up adds each joining etcd member as a voter before it runs and has "
                           "caught up, not as a learner (the order a scale-up must not take)")
    cpu_limit_m: dict[Component, Annotated[int, Field(ge=10, le=4000)]] = Field(
        default_factory=dict, description="once up, each named component's CPU quota in millicores on every host")
