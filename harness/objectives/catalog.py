"""Every property a scenario measures, one record each: a stable name that says what was measured, its unit and
direction, its objective's default and where that default comes from (upstream defaults and published SLOs, never the
cluster under test). The policy's model (policy.py) takes its defaults from here; scenarios declare what they measure
with a marker; docs/gate.md's table is made from these records (table.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness import thresholds as t
from harness.objectives import bounds
from harness.objectives.bounds import UPSTREAM, Bound, Configuration
from harness.topology import Component


@dataclass(frozen=True)
class MeasureSpec:
    """One measured property: what it is, how it is judged, and its objective's default and where it comes from. A
    scenario declares the measures it records whenever it runs (`@pytest.mark.measures(...)`); the gate reads the
    declarations from the run's record, so a scenario renamed keeps its measures."""

    name: str
    unit: str  # s, %, count
    what: str
    source: str  # where the objective's default comes from
    default: float | dict[str, float]  # the objective when the policy sets none (per subject for a measure kept so)
    higher_is_better: bool
    subjects: tuple[str, ...] = ()  # a measure kept per subject (a component, an SLO class)
    bound: Bound | None = None  # what the cluster's own configuration promises (bounds.py), where it promises one


def _spec(name, unit, what, source, higher_is_better=False, subjects=(), *, default=None, bound=None) -> MeasureSpec:
    """A measure with a configured bound takes its default objective from that bound with the upstream defaults."""
    if default is None:
        default = round(bound.of(UPSTREAM), 1)
    return MeasureSpec(name, unit, what, source, default, higher_is_better, tuple(subjects), bound)


def _default_time_to_healthy() -> dict[str, float]:
    """A crashed static pod's return as the kubelet's defaults promise it, per component."""
    return {c: round(t.KUBELET_RELIST_S + 2 * t.KUBELET_CRASH_BACKOFF_S + t.STARTUP_ALLOWANCE_S[Component(c)], 1)
            for c in COMPONENTS}


COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
SLO_CLASSES = ("mutating", "get", "list_namespace", "list_cluster")

MEASURES = {spec.name: spec for spec in (
    _spec("time_to_healthy_s", "s", "a killed control-plane component healthy again (its first kill)",
          "the kubelet's defaults for a crashed static pod (relist 1 s, crash back-off 10 s, 20 "
          "s for one that crashed before within 10 min) + the component's start-up allowance "
          "(harness/thresholds.py: about 3x the measured start-up)", subjects=COMPONENTS,
          default=_default_time_to_healthy()),
    _spec("lease_failover_s", "s", "a killed or frozen leader's lease held by another identity",
          "the upstream leader-election defaults 15/10/2 s: lease + 2 x 2.2 x retry "
          "(client-go's jitter) + 0.5 s observation (ANCHORS: lease + retry, about 17 s, "
          "without the jitter)", bound=bounds.LEASE_FAILOVER),
    _spec("reconcile_after_failover_s", "s",
          "a killed controller-manager leader until its work (a Deployment's pods) is done by the next leader",
          "the lease failover objective (24.3 s) + the controllers' first sync after taking the lease (5 s, about "
          "3x the 1.6 s measured here: no upstream figure bounds it; harness/thresholds.py)",
          bound=bounds.RECONCILE_AFTER_FAILOVER),
    _spec("bind_after_failover_s", "s",
          "a killed kube-scheduler leader until a pod asked for after the kill is bound by the next leader",
          "the lease failover objective (24.3 s) + the new leader's first binding (5 s: it binds from caches synced "
          "as a standby; no upstream figure bounds it; harness/thresholds.py)", bound=bounds.BIND_AFTER_FAILOVER),
    _spec("reconcile_s", "s",
          "a steady controller-manager's slowest work on one object (a Deployment's pods created, a deleted one's "
          "collected, of three or more each; a namespace is allowed the namespace controller's 5 s grace on top): "
          "without a fault, or while a component is killed, counted from when the work could resume (the component "
          "healthy again, or the controller-manager's lease moved)",
          "no upstream figure bounds it: a leader whose informers synced long ago needs no more than a new leader's "
          "first sync allowance (5 s, about 3x the 1.6 s measured here; harness/thresholds.py)",
          default=t.CONTROLLER_WORK_S),
    _spec("bind_s", "s", "a steady kube-scheduler's slowest binding of one pod without a fault (of three or more)",
          "SIG Scalability's pod startup SLO (ANCHORS: p99 <= 5 s from creation to Running): a pod's binding is a "
          "part of its start-up", default=t.SCHEDULER_BIND_S),
    _spec("lease_give_up_s", "s", "a leader woken past its renew deadline gives its leadership up",
          "the upstream renew deadline 10 s + one jittered retry (2.2 x 2 s) + 0.5 s "
          "observation", bound=bounds.LEASE_GIVE_UP),
    _spec("lb_detection_s", "s", "the load balancer takes a dead or unready apiserver out of rotation",
          "HAProxy's default checks (inter 2 s, fall 3, timeout 2 s; ANCHORS): a check in "
          "flight, then fall failing checks that may hang up to 2 s, + 0.5 s observation",
          bound=bounds.LB_DETECTION),
    _spec("lb_detection_hung_s", "s", "the load balancer takes a hung apiserver (accepts, never answers) out",
          "the same HAProxy defaults: a hung apiserver makes each failing check last its "
          "timeout", bound=bounds.LB_DETECTION_HUNG),
    _spec("etcd_leader_change_s", "s", "a dead or cut-off etcd leader replaced by a new one",
          "etcd's default election timeout 1000 ms (ANCHORS): 3 election timeouts (one split "
          "vote) + 0.5 s observation", bound=bounds.ETCD_LEADER_CHANGE),
    _spec("etcd_write_stall_s", "s", "the longest stretch without an acknowledged etcd write around a fault",
          "the etcd leader change objective + one client request timeout (the writer's 2 s)",
          bound=bounds.ETCD_WRITE_STALL),
    _spec("availability_pct", "%", "requests through the load balancer that succeeded, in the judged window",
          "ClusterLoader2's API availability threshold (ANCHORS: 99.5 %)", higher_is_better=True,
          default=t.AVAILABILITY_PCT),
    _spec("lost_writes", "count", "acknowledged writes missing at the end",
          "acknowledged writes must never be lost (ANCHORS: etcd's robustness tests, Jepsen)", default=0),
    _spec("api_p99_s", "s", "an API call class's worst p99 under load (in the apiservers; at the client under a fault)",
          "the SIG Scalability SLOs (ANCHORS): mutating and single-object reads p99 <= 1 s, "
          "namespace LISTs <= 5 s, cluster LISTs <= 30 s", subjects=SLO_CLASSES,
          default={"mutating": t.SLO_MUTATING_S, "get": t.SLO_GET_S, "list_namespace": t.SLO_LIST_NAMESPACE_S,
                   "list_cluster": t.SLO_LIST_CLUSTER_S}),
    _spec("pod_startup_s", "s", "the p99 of pods' creation to Running as a watch reports it, on hollow nodes",
          "SIG Scalability's pod startup SLO (ANCHORS): stateless pods, no image pull, p99 <= 5 "
          "s from creation to Running as a watch reports it", default=t.SLO_POD_STARTUP_S),
    _spec("nodes_not_ready", "count", "hollow nodes seen NotReady under load (false heartbeat failures)",
          "no healthy node may be taken for dead (KEP-589: heartbeats every 10 s, grace 40-50 "
          "s)", default=0),
    _spec("node_not_ready_s", "s", "a node whose heartbeats stopped until it is declared NotReady",
          "kube-controller-manager's defaults since v1.32 (KEP-589): --node-monitor-grace-period 50 s + 2 x "
          "--node-monitor-period 5 s (one pass to see the last renewal, one to declare), + the node monitor's 5 s "
          "reads + 0.5 s observation", bound=bounds.NODE_NOT_READY),
    _spec("power_loss_recovery_s", "s", "every control-plane node powered off at once until all is healthy",
          "a node's boot (20 s) + etcd's and the apiserver's start-up allowances + the "
          "kubelet's status period (10 s) + one LB check (2 s), harness/thresholds.py",
          default=t.kind_power_loss_recovery_s()),
    _spec("checkpoint_refresh_s", "s", "a checkpointed pod's changed secret until the node's copy holds it",
          "no staler than a running pod's own mounted secret: the kubelet's sync period (60 s "
          "default) + the watch cache's propagation delay (none: Kubernetes docs, Secrets, "
          "mounted Secrets are updated automatically)", default=t.KUBELET_SYNC_PERIOD_S),
    _spec("snapshot_restore_s", "s", "quorum lost for good until the cluster serves again from a snapshot",
          "etcd's and the apiserver's start-up allowances + a lease failover (24.3 s) + the "
          "LB's rise checks (2 x 2 s)", bound=bounds.SNAPSHOT_RESTORE),
    _spec("certificate_days_left", "days",
          "the fewest days any apiserver or etcd listener's certificate has left, as its clients meet it over TLS",
          "renewal 30 days before expiry: Let's Encrypt's advice (renew every 60 days of a 90-day certificate), the "
          "default of Go's golang.org/x/crypto/acme/autocert (`RenewBefore`: \"renewed 30 days before "
          "expiration\") and of cert-manager before v1 (`DefaultRenewBefore = 24 * 30 h`, "
          "pkg/apis/certmanager/v1alpha1/const.go); a certificate with less left should already have been "
          "renewed. Quorum issues kubeadm's validity (1 year, CAs 10 years)", higher_is_better=True,
          default=t.CERTIFICATE_RENEW_BEFORE_DAYS),
    _spec("capacity_headroom_x", "x",
          "the users' requests per second the control plane carried at its knee under a rising load, beside the "
          "expected nodes' heartbeats, divided by the policy's expected_load users' rate, with every apiserver up "
          "and with the busiest one down",
          "N+1 provisioning: the declared production load carried, also with one apiserver lost (the N-1 case is "
          "judged against the same objective). 1.0 is no margin beyond it; a team that wants room to grow sets "
          "more here or declares a larger expected_load", higher_is_better=True, default=t.CAPACITY_HEADROOM_X),
)}


# the values each unit can take: a duration, a count or a ratio is never negative, a share never over 100 %, and a
# certificate's days left may be negative (it expired that long ago)
RANGES = {"s": (0.0, math.inf), "count": (0.0, math.inf), "%": (0.0, 100.0), "days": (-math.inf, math.inf),
          "x": (0.0, math.inf)}


def out_of_range(name: str, value: float) -> str | None:
    """Why `value` cannot be a figure of the measure `name` (None: it can)."""
    low, high = RANGES[spec(name).unit]
    if not low <= value <= high:
        return f"{value:g} is outside what {name} can be ({low:g} to {high:g} {spec(name).unit})"
    if spec(name).unit == "count" and value != int(value):
        return f"{value:g} is not a whole count"
    return None


def configured_bound(name: str, configuration: Configuration) -> float | None:
    """What `configuration` (a target) promises for the measure `name`; None where it promises nothing (a load
    balancer without health checks) or the measure has no configured bound."""
    bound = spec(name).bound
    return None if bound is None else bound.of(configuration)


def spec(name: str) -> MeasureSpec:
    if name not in MEASURES:
        raise KeyError(f"no measure {name!r}; measures: {', '.join(MEASURES)}")
    return MEASURES[name]
