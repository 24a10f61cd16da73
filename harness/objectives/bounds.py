"""What a cluster's own configuration promises for a measure: the second check beside the objective (what the user
needs). Each bound is a function of the configuration as the target states it (harness/target/promises.py: the lease
timings, etcd's election timeout, the load balancer's health check), so the same scenario judges a replica Quorum
built and a cluster someone else configured by their own settings. A measure's record (catalog.py) names its bound
and takes its default objective from the same function with every upstream default (UPSTREAM): the default and the
configured bound cannot drift apart.

The formulas are here, each with its derivation; their constants (client-go's jitter, the observation margin, the
start-up allowances) are in harness/thresholds.py with their sources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from harness.thresholds import (APISERVER_ETCD_READYCHECK_S, CLIENT_GO_JITTER, CONTROLLERS_FIRST_SYNC_ALLOWANCE_S,
                                NODE_MONITOR_GRACE_S, NODE_MONITOR_PERIOD_S, OBSERVATION_S,
                                SCHEDULER_FIRST_BIND_ALLOWANCE_S, STARTUP_ALLOWANCE_S)
from harness.topology import Component, EtcdSettings, HealthCheck, LeaderElection

WRITER_TIMEOUT_S = 2.0  # the etcd writer's request timeout (harness/monitors/etcd_writer.py)
NODE_SAMPLE_S = 5.0  # how often the node monitor reads the NodeNotReady Events (harness/monitors/nodes.py)


@dataclass(frozen=True)
class NodeMonitoring:
    """What decides how soon a node whose heartbeats stopped is declared NotReady: kube-controller-manager's
    --node-monitor-grace-period and --node-monitor-period (KEP-589; the v1.32+ defaults)."""

    grace_s: float = NODE_MONITOR_GRACE_S
    period_s: float = NODE_MONITOR_PERIOD_S


class Configuration(Protocol):
    """The settings the bounds read: a Target states them (harness/target/promises.py), UPSTREAM has the defaults."""

    def leader_election(self) -> LeaderElection: ...

    def etcd_settings(self) -> EtcdSettings: ...

    def load_balancer_check(self) -> HealthCheck | None: ...

    def node_monitoring(self) -> NodeMonitoring: ...


class UpstreamDefaults:
    """The configuration with every upstream default: the lease timings 15/10/2 s, etcd's 100/1000 ms, HAProxy's
    checks (inter 2 s, fall 3, rise 2, timeout 2 s). Each measure's default objective is its bound here."""

    def leader_election(self) -> LeaderElection:
        return LeaderElection()

    def etcd_settings(self) -> EtcdSettings:
        return EtcdSettings()

    def load_balancer_check(self) -> HealthCheck:
        return HealthCheck()

    def node_monitoring(self) -> NodeMonitoring:
        return NodeMonitoring()


UPSTREAM = UpstreamDefaults()


@dataclass(frozen=True)
class Bound:
    """A measure's bound: `of` the configuration (None where it promises nothing, e.g. a load balancer that checks
    nothing), and how it derives, as the report says it."""

    of: Callable[[Configuration], float | None]
    source: str


def leader_failover_bound_s(election: LeaderElection) -> float:
    """lease-duration + retry-period + margin, where the margin is client-go's jitter on both sides of
    the expiry ((2 x 2.2 - 1) x retry-period) plus observation: lease + 4.4 x retry + 0.5 s."""
    jittered_retry = (1 + CLIENT_GO_JITTER) * election.retry_period_s
    return election.lease_duration_s + 2 * jittered_retry + OBSERVATION_S


def reconcile_after_failover_bound_s(election: LeaderElection) -> float:
    """A killed controller-manager leader until the work it left is done by the next: the lease failover, then the
    new leader's controllers starting and syncing their informers (they start only once it leads)."""
    return leader_failover_bound_s(election) + CONTROLLERS_FIRST_SYNC_ALLOWANCE_S


def bind_after_failover_bound_s(election: LeaderElection) -> float:
    """A killed kube-scheduler leader until a pod asked for after the kill is bound by the next: the lease failover,
    then the new leader's first binding from the caches it synced as a standby."""
    return leader_failover_bound_s(election) + SCHEDULER_FIRST_BIND_ALLOWANCE_S


def node_not_ready_bound_s(monitoring: NodeMonitoring) -> float:
    """A node's heartbeats stopped until it is seen declared NotReady. Its last Lease renewal came before the stop; the
    node lifecycle controller notes a renewal's time when its next monitor pass sees it (up to one period later:
    pkg/controller/nodelifecycle, tryUpdateNodeHealth's probeTimestamp), and declares the node on the first pass after
    the grace period has run from there: at most grace + 2 x period after the stop. Then the node monitor's next read
    of the Events, and the observation margin."""
    return monitoring.grace_s + 2 * monitoring.period_s + NODE_SAMPLE_S + OBSERVATION_S


def leader_give_up_bound_s(election: LeaderElection) -> float:
    """A leader woken after its renew deadline passed gives up when its renew loop times out: at most the
    renew deadline plus one jittered retry, plus observation."""
    return election.renew_deadline_s + (1 + CLIENT_GO_JITTER) * election.retry_period_s + OBSERVATION_S


def etcd_leader_change_bound_s(etcd: EtcdSettings) -> float:
    """Leader loss to a new leader: the followers notice after one election timeout, an election can
    split once (randomised timeouts up to 2x), plus one watcher poll per member (0.1 s): 3 election
    timeouts + 0.5 s is the bound, 3.5 s with the etcd defaults (measured 1.0-1.3 s, docs/benchmarks.md)."""
    return 3 * etcd.election_timeout_ms / 1000 + 0.5


def etcd_write_outage_bound_s(etcd: EtcdSettings, client_timeout_s: float = WRITER_TIMEOUT_S) -> float:
    """The longest stretch with no acknowledged write when the leader dies: the leader change plus one
    client request timeout (a request in flight to the dead leader only fails when it times out)."""
    return etcd_leader_change_bound_s(etcd) + client_timeout_s


def lb_detection_bound_s(check: HealthCheck, hang_s: float | None = None) -> float:
    """From the moment an apiserver's /readyz starts failing until the LB marks it DOWN (worst case): one check
    that started just before may still pass, then `fall` failing ones, each of which may hang until
    min(check timeout, the apiserver's etcd readycheck timeout), since HAProxy schedules each check `inter` after
    the previous one completed; plus observation (14.5 s for ha3). /readyz fails as soon as a graceful shutdown
    starts (ANCHORS), and an apiserver started with a bad flag never passes it. A hung apiserver (hang_s: the
    check timeout) answers no check at all, so each failing check lasts the whole timeout.

    An apiserver cut off from the etcd majority has the same shape: its /readyz etcd check is a linearizable GET
    with the readycheck timeout, sent at most once per half timeout and answered from the last result in between
    (k8s.io/apiserver v0.34.4, storagebackend/factory/etcd3.go); a linearizable read needs the leader's quorum, so
    it hangs from the cut on, but one check right after the cut may still be answered with the cached success."""
    hang = min(check.timeout_s, APISERVER_ETCD_READYCHECK_S) if hang_s is None else hang_s
    return (check.fall + 1) * check.interval_s + check.fall * hang + OBSERVATION_S


def snapshot_restore_bound_s(election: LeaderElection, check: HealthCheck | None) -> float:
    """Quorum lost for good until the cluster serves again from a snapshot: every member restored and started,
    every apiserver restarted (their watch caches hold revisions the restored store no longer has), the leases
    held again after a failover, and the LB's rise checks for the restarted apiservers (none without checks)."""
    rise_s = check.interval_s * check.rise if check is not None else 0.0
    return (STARTUP_ALLOWANCE_S[Component.ETCD] + STARTUP_ALLOWANCE_S[Component.APISERVER]
            + leader_failover_bound_s(election) + rise_s)


def _detection(configuration: Configuration, *, hung: bool) -> float | None:
    check = configuration.load_balancer_check()
    if check is None:
        return None
    return lb_detection_bound_s(check, hang_s=check.timeout_s if hung else None)


LEASE_FAILOVER = Bound(lambda c: leader_failover_bound_s(c.leader_election()),
                       "the configured lease duration + 2 x 2.2 x retry period + 0.5 s")
RECONCILE_AFTER_FAILOVER = Bound(lambda c: reconcile_after_failover_bound_s(c.leader_election()),
                                 "the configured lease failover + the controllers' first sync allowance (5 s)")
BIND_AFTER_FAILOVER = Bound(lambda c: bind_after_failover_bound_s(c.leader_election()),
                            "the configured lease failover + the scheduler's first binding allowance (5 s)")
NODE_NOT_READY = Bound(lambda c: node_not_ready_bound_s(c.node_monitoring()),
                        "the configured node-monitor grace period + 2 x its monitor period + the node monitor's 5 s "
                        "reads + 0.5 s")
LEASE_GIVE_UP = Bound(lambda c: leader_give_up_bound_s(c.leader_election()),
                      "the configured renew deadline + one jittered retry + 0.5 s")
LB_DETECTION = Bound(lambda c: _detection(c, hung=False),
                     "(fall + 1) x the LB's check interval + fall x min(check timeout, readycheck timeout) + 0.5 s")
LB_DETECTION_HUNG = Bound(lambda c: _detection(c, hung=True),
                          "(fall + 1) x the LB's check interval + fall x its check timeout + 0.5 s")
ETCD_LEADER_CHANGE = Bound(lambda c: etcd_leader_change_bound_s(c.etcd_settings()),
                           "3 x the configured election timeout + 0.5 s")
ETCD_WRITE_STALL = Bound(lambda c: etcd_write_outage_bound_s(c.etcd_settings()),
                         "the leader change bound + one client request timeout")
SNAPSHOT_RESTORE = Bound(lambda c: snapshot_restore_bound_s(c.leader_election(), c.load_balancer_check()),
                         "etcd's and the apiserver's start-up allowances + the configured lease failover + the LB's "
                         "rise checks")
