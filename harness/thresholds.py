"""The constants scenarios judge by, each from upstream defaults or shared ANCHORS.md, and the bounds that are not
yet a measure's (the kubelet's and the checkpointer's); a measure's configured bound is in
harness/objectives/bounds.py, built from these constants.

Nothing here is tuned to make a test pass: each value names its source. Where a value is a measured
allowance (start-up times), the measurement is in docs/benchmarks.md and the margin is stated.
"""

from __future__ import annotations

from harness.checkpointer import agent as checkpointer_agent
from harness.topology import Component, EtcdSettings, HealthCheck, Topology

# ANCHORS: ClusterLoader2 API availability measurement threshold.
AVAILABILITY_PCT = 99.5
# ClusterLoader2 measures availability over the whole test. A scenario that restarts apiservers costs one
# request per long-lived connection pinned to a restarted backend (GOTCHAS.md); judged over 20 s (400
# requests at 20/s) one request is 0.25 %, so such scenarios observe at least 60 s (1200 requests).
AVAILABILITY_MIN_WINDOW_S = 60.0
# A probe is available when it is answered 200, however slowly, as ClusterLoader2's APIAvailability counts it: its
# cluster-level probe has no client timeout, its per-host probe runs `curl --connect-timeout 5` (hostPollTimeoutSeconds,
# default 5). Quorum's probes wait that long for the whole answer, so a hung apiserver still fails them; how fast the
# API answers is the latency SLOs' to judge (docs/scenarios.md, "What a probe counts as available").
AVAILABILITY_PROBE_TIMEOUT_S = 5.0


def availability_probe_rate(restarts: int, connections: int, window_s: float = AVAILABILITY_MIN_WINDOW_S) -> float:
    """Requests/s at which `restarts` apiserver restarts, each costing about one request per long-lived connection
    whatever the rate, fit the AVAILABILITY_PCT error budget of a `window_s` window (at least the usual 20/s).
    Why a rate and not a longer window: a restart's cost is per connection (the request in flight, or the
    /readyz answered 500 once SIGTERM starts the shutdown, after which the apiserver closes the connection),
    while an outage costs requests in proportion to the rate, so probing faster separates the two without
    lengthening the run. Measured in CI (2026-11-24): a rolling change and its rollback, 6 restarts, cost 6
    requests of 1112 at 18.5/s from 2 connections (99.46 %), one restart 3 of them (both connections and one
    reconnect routed to the stopping apiserver before the LB marked it DOWN)."""
    budget = 1.0 - AVAILABILITY_PCT / 100.0
    return max(20.0, restarts * connections / (budget * window_s))

# ANCHORS: after SIGKILL a standby takes over about lease-duration + retry-period after the last renewal.
# That ignores client-go's jitter (k8s.io/client-go/tools/leaderelection, v0.34.4): a candidate retries every
# retry-period x (1 + rand x JitterFactor), JitterFactor = 1.2, and judges expiry from the moment *it* first
# saw the last renewal. So the worst case after a kill is lease + 2 x 2.2 x retry (it may see the last renewal
# up to 2.2 x retry late, then retry up to 2.2 x retry after expiry): 23.8 s with the 15/10/2 defaults.
# Measured here: 17.1-19.6 s (docs/scenarios.md). Observation adds one watcher poll and an API round trip.
CLIENT_GO_JITTER = 1.2
OBSERVATION_S = 0.5

# Start-up allowance after a restart, per component: ha3 comes up cold (13 processes at once) in about
# 9.5 s (docs/benchmarks.md, cluster_up_down); a single restarted component starts in less. The
# allowance is about 3x the cold figure for the apiserver (storage and RBAC bootstrap) and less for
# the rest, so only a component that really does not come back fails.
STARTUP_ALLOWANCE_S = {
    Component.ETCD: 15.0,
    Component.APISERVER: 30.0,
    Component.CONTROLLER_MANAGER: 20.0,
    Component.SCHEDULER: 20.0,
    Component.HAPROXY: 10.0,
}

# A new controller-manager leader starts its controllers only once it holds the lease: their informers list and sync
# before the first object is reconciled (k8s.io/kubernetes cmd/kube-controller-manager, run's OnStartedLeading). No
# upstream figure bounds it; like the start-up allowances, it is about 3x what was measured here: 1.5-1.6 s on ha3 from
# the new holder observed to the first Deployment's pods (docs/benchmarks.md).
CONTROLLERS_FIRST_SYNC_ALLOWANCE_S = 5.0

# A steady controller-manager's work on one probe (a Deployment's pods, a deleted one's ReplicaSet and pods collected,
# a namespace finalized): no upstream figure bounds it either. A leader whose informers synced long ago needs no more
# than a new leader's first sync allowance (docs/benchmarks.md has what was measured).
CONTROLLER_WORK_S = CONTROLLERS_FIRST_SYNC_ALLOWANCE_S
# The namespace controller takes a deleted namespace up only 5 s after it sees the deletion, so that every apiserver's
# lifecycle admission sees it first (namespaceDeletionGracePeriod, k8s.io/kubernetes pkg/controller/namespace,
# namespace_controller.go); a namespace's finalization is allowed that wait on top of CONTROLLER_WORK_S.
NAMESPACE_DELETION_GRACE_S = 5.0

# A new kube-scheduler leader binds from caches it filled as a standby: its informers start and sync before it runs
# for the lease, and only the scheduling loop waits for leadership (k8s.io/kubernetes cmd/kube-scheduler/app/server.go,
# Run). No upstream figure bounds its first binding either: the same 5 s allowance as the controllers' first sync,
# against 0.08-0.09 s measured on idle ha3-1000 (docs/benchmarks.md), until it is measured under load.
SCHEDULER_FIRST_BIND_ALLOWANCE_S = 5.0

# ANCHORS: tbf measured within -4 % of its rate; the suite allows the 10 %.
BANDWIDTH_TOLERANCE = 0.10

# ANCHORS: Typhoon quotes 5 Gbps pod-to-pod on t3.small; the kind suite measures exactly that path (pod veth,
# node, CNI route, node, pod), and hosts on one machine, one hop less, must do at least as much.
POD_TO_POD_FLOOR_GBIT = 5.0
HOST_TO_HOST_FLOOR_GBIT = POD_TO_POD_FLOOR_GBIT


def restart_budget_s(topology: Topology, component: Component, kill: int = 1) -> float:
    """The `kill`-th SIGKILL in a row of a supervised component until it is healthy again: the supervisor's restart
    back-off for it (doubling from backoff_s up to max_backoff_s; reset after a stable run, which only makes this
    generous) plus the component's start-up allowance."""
    policy = topology.restart_policy(component)
    backoff = min(policy.backoff_s * 2 ** (kill - 1), max(policy.max_backoff_s, policy.backoff_s))
    return backoff + STARTUP_ALLOWANCE_S[component]


def lb_detection_s(topology: Topology) -> float:
    """ANCHORS: HAProxy marks a dead backend down after `fall` failed checks `inter` apart (+ check timeout)."""
    return topology.load_balancer.health_check.detection_s


def lb_rise_s(check: HealthCheck | None) -> float:
    """ANCHORS: and back up after `rise` passing checks; a load balancer that checks nothing (None) sends clients
    to a backend as soon as it accepts them."""
    return 0.0 if check is None else check.interval_s * check.rise


def etcd_election_s(etcd: EtcdSettings) -> float:
    """ANCHORS: a new etcd leader is elected in about one election timeout."""
    return etcd.election_timeout_ms / 1000


# ---- API SLOs under load (ANCHORS.md, Kubernetes SIG Scalability SLOs) ------------------------------
SLO_MUTATING_S = 1.0  # p99 of mutating calls on single objects, per (resource, verb)
SLO_GET_S = 1.0  # p99 of single-object reads
SLO_LIST_NAMESPACE_S = 5.0  # p99 of namespace-scoped LISTs
SLO_LIST_CLUSTER_S = 30.0  # p99 of cluster-scoped LISTs
SLO_WINDOW_S = 300.0  # the SLOs are p99 over 5-minute windows; the ci profile uses shorter ones, stated in the report
SLO_POD_STARTUP_S = 5.0  # p99 startup of stateless pods, creation to Running observed by a watch, no image pull
# A steady scheduler's binding of one pod: a pod's binding is a part of its start-up, so the start-up SLO bounds it
# (SIG Scalability's pod startup SLO, creation to Running; the scheduler's share is what is left after binding)
SCHEDULER_BIND_S = SLO_POD_STARTUP_S
# The latency SLIs are measured inside the apiserver, from receiving a request to the last byte sent (sig-scalability
# slos/api_call_latency.md); the load measures at the client, so a load process's first requests also carry its
# users' TCP and TLS handshakes through the LB and the process's own start-up on a 2-core machine. Measured in CI
# (2026-11-22): first requests up to 4.1 s, the last one over the SLO 3.0 s after its process's first request, and
# the two load processes starting up to 2.4 s apart. The latency verdicts skip each process's first 5 s.
LOAD_WARMUP_S = 5.0
# The error budget of a load run follows from ClusterLoader2's API availability threshold (99.5 %).
LOAD_ERROR_RATE_MAX = 1.0 - AVAILABILITY_PCT / 100.0


APISERVER_ETCD_READYCHECK_S = 2.0  # kube-apiserver --etcd-readycheck-timeout default
# kube-apiserver's etcd client pings a connection after 30 s without traffic from the member and drops it 10 s
# later (keepaliveTime, keepaliveTimeout in k8s.io/apiserver v0.34.4 storagebackend/factory/etcd3.go; no flag).
# Until then the *other* apiservers keep sending a share of their etcd requests to a member cut off from them,
# and those requests hang: measured in the load suite's partition scenario (docs/load.md).
APISERVER_ETCD_CLIENT_DETECTION_S = 30.0 + 10.0
# A write through the LB while one member is cut off may hang on such a connection (one its client had left idle
# is first found dead when a request uses it), fail when the keepalive gives up, and succeed when retried: a
# client that retries has its write accepted within that detection and one more attempt (docs/scenarios.md).
WRITE_DURING_PARTITION_S = APISERVER_ETCD_CLIENT_DETECTION_S + 10.0


# ---- node heartbeats (KEP-589; kube-controller-manager v1.34 defaults) -------------------------------
NODE_MONITOR_GRACE_S = 50.0  # --node-monitor-grace-period (ANCHORS' 40 s predates v1.32)
NODE_MONITOR_PERIOD_S = 5.0  # --node-monitor-period


def node_failure_detection_s() -> float:
    """How long after the node lifecycle controller (re)starts watching a node a broken heartbeat shows as
    NotReady: its grace period plus one monitor period. A new controller-manager leader gives every node
    this long afresh, so a heartbeat verdict needs at least this much observation after a fault."""
    return NODE_MONITOR_GRACE_S + NODE_MONITOR_PERIOD_S

# A dead node's pod is deleted by the taint-eviction controller once its toleration of the node's NoExecute taint runs
# out, timed from when the controller sees the taint (k8s.io/kubernetes pkg/controller/tainteviction). The dead-node
# scenario's own pod tolerates it for EVICTION_TOLERATION_S, a user's pod's default being 300 s (the
# DefaultTolerationSeconds admission plugin); it must be evicted within EVICTION_ALLOWANCE_S either side of that: the
# monitor sees the taint and the deletion each up to one read (1 s) late, and the controller's watch of the node
# another second.
EVICTION_TOLERATION_S = 5
EVICTION_ALLOWANCE_S = 3.0

# ---- kind: kubeadm's static pods under the kubelet (kubelet v1.34 defaults) ---------------------------------------
KUBELET_RELIST_S = 1.0  # the PLEG relists containers every second: how soon an exit is noticed
KUBELET_CRASH_BACKOFF_S = 10.0  # the first crash-loop back-off; the very first restart is not delayed
KUBELET_FILE_CHECK_S = 20.0  # fileCheckFrequency: a changed manifest is picked up by then (inotify: sooner)
KUBELET_STATUS_S = 10.0  # nodeStatusUpdateFrequency: how soon a rebooted node reports Ready
KUBELET_MANIFEST_PICKUP_S = KUBELET_FILE_CHECK_S + KUBELET_RELIST_S
# kind's Envoy health check (sigs.k8s.io/kind loadbalancer config, copied by the HAProxy stand-in): GET /healthz
# every 2 s, timeout 3 s, down after 2 failures, up after 1. Worst case from an apiserver going away until the
# balancer stops sending it connections: one check passing just before, then 2 failing ones that may each hang
# for the timeout (the same shape as an apiserver cut from etcd, harness/objectives/bounds.py), plus observation.
KIND_LB_INTERVAL_S, KIND_LB_TIMEOUT_S, KIND_LB_FALL = 2.0, 3.0, 2
KIND_LB_DETECTION_S = (KIND_LB_FALL + 1) * KIND_LB_INTERVAL_S + KIND_LB_FALL * KIND_LB_TIMEOUT_S + OBSERVATION_S
# docker start -> systemd -> containerd -> kubelet running: measured 6.9 s here (docs/backends.md); ~3x.
KIND_NODE_BOOT_ALLOWANCE_S = 20.0
# a healed partition until the cut-off apiserver's /readyz answers: measured 6.6-10.3 s (docs/scenarios.md); ~3x
KIND_PARTITION_REJOIN_ALLOWANCE_S = 30.0
KIND_NODE_REJOIN_ALLOWANCE_S = 120.0  # see kind_node_rejoin_s
# kubeadm's kube-apiserver livenessProbe (its manifest): /livez every 10 s, restarted after 8 failures in a row. The
# earliest restart of an apiserver whose /livez fails from the start of a fault: the 8th failure, 7 periods after
# the first (which may come right at the start).
KUBEADM_LIVENESS_PERIOD_S, KUBEADM_LIVENESS_FAILURES = 10.0, 8
KUBEADM_APISERVER_LIVENESS_KILL_S = (KUBEADM_LIVENESS_FAILURES - 1) * KUBEADM_LIVENESS_PERIOD_S


KUBELET_MAX_CRASH_BACKOFF_S = 300.0  # the back-off doubles per crash up to 5 min (reset after 10 min without one)
# a crash more than this long after the kubelet's last restart of a container meets no back-off, and starts the
# doubling afresh (kubelet.go sets the crash-loop Backoff's HasExpiredFunc to 600 s; docs/scenarios.md)
KUBELET_BACKOFF_RESET_S = 600.0


def kubelet_back_off_reset_in_s(restarts: int, started_at: float | None, now: float) -> float:
    """Seconds until a crash of a static pod's container meets the kubelet's first back-off again: 0 if it was
    never restarted (no back-off yet), else when its running container is KUBELET_BACKOFF_RESET_S old (the
    restart that started it was the kubelet's last update of its back-off). A container not running: unknown,
    so the whole reset."""
    if restarts == 0:
        return 0.0
    if started_at is None:
        return KUBELET_BACKOFF_RESET_S
    return min(KUBELET_BACKOFF_RESET_S, max(0.0, started_at + KUBELET_BACKOFF_RESET_S + 1.0 - now))


def static_pod_restart_budget_s(component: Component = Component.APISERVER, kill: int = 1, earlier_restarts: int = 0
                                ) -> float:
    """The `kill`-th SIGKILL of a control-plane static pod in a row until it answers again: the kubelet notices
    the exit, waits its crash back-off, and the component starts up. The back-off allowed for the first kill is
    one 10 s step, not none, because an earlier scenario may have killed the same pod (the default component
    is the apiserver, whose start-up allowance is the longest). `earlier_restarts` (the container's restartCount
    before the first kill) adds the steps they cost: each doubles the back-off, unless the container ran 10 min
    since, which only makes the budget generous (seen in CI: a scheduler killed by the leader-election scenario
    and restarted once at start-up came back after a 20 s back-off, over a one-step budget)."""
    # crash n (earlier restarts + this kill) waits n - 1 steps; at least one earlier crash is assumed, as before
    steps = max(earlier_restarts, 1) + kill - 1
    backoff = min(KUBELET_CRASH_BACKOFF_S * 2 ** (steps - 1), KUBELET_MAX_CRASH_BACKOFF_S)
    return KUBELET_RELIST_S + backoff + STARTUP_ALLOWANCE_S[component]


def held_manifest_return_s(component: Component) -> float:
    """A static pod held by taking its manifest away (every one but etcd's), from the manifest's return
    until it answers: the kubelet picks the file up (at most its file check period + relist), waits the pod's
    crash back-off (the same manifest returns under the same pod UID) and the component starts."""
    return KUBELET_MANIFEST_PICKUP_S + KUBELET_CRASH_BACKOFF_S + STARTUP_ALLOWANCE_S[component]


def crash_loop_return_s(component: Component, earlier_restarts: int | None, kills: int) -> float:
    """A static pod held by a crash loop (etcd), from the loop's end until it answers: the kubelet's next
    start waits the back-off that the restarts before the hold and the loop's kills brought it to (restarts
    unknown: the back-off's cap), then the component starts."""
    if earlier_restarts is None:
        return KUBELET_RELIST_S + KUBELET_MAX_CRASH_BACKOFF_S + STARTUP_ALLOWANCE_S[component]
    return static_pod_restart_budget_s(component, kill=max(kills, 1), earlier_restarts=earlier_restarts)


def kind_power_loss_recovery_s() -> float:
    """Every control-plane node restarted at once until the whole cluster is healthy: the nodes boot, etcd
    regains quorum, the apiservers start, the nodes report Ready, the balancer marks an apiserver up again.
    Measured 33 s on this machine (docs/backends.md)."""
    return (KIND_NODE_BOOT_ALLOWANCE_S + STARTUP_ALLOWANCE_S[Component.ETCD] + STARTUP_ALLOWANCE_S[Component.APISERVER]
            + KUBELET_STATUS_S + KIND_LB_INTERVAL_S)


def kind_node_rejoin_s() -> float:
    """On a kubeadm control plane each control-plane node's kubelet talks to its own apiserver
    (/etc/kubernetes/kubelet.conf). When that apiserver is away longer than the node-monitor grace period allows,
    the node lifecycle controller marks the node NotReady and every pod on it not Ready (seen after 45 s of a
    corrupted manifest and of a partition). From the apiserver's return until the node and every static pod
    were Ready again took 37-63 s here: several kubelet timers in a row (heartbeat retries, the status
    manager, each pod worker's resync every syncFrequency). The allowance is about 2x the worst measured."""
    return KIND_NODE_REJOIN_ALLOWANCE_S


def kind_manifest_restore_s() -> float:
    """A restored manifest until its apiserver answers /readyz again: the kubelet picks the file up, notices
    the old container gone, may wait its first crash back-off, and the apiserver starts."""
    return KUBELET_MANIFEST_PICKUP_S + static_pod_restart_budget_s()


def kind_partition_recovery_s(partitioned_s: float = 0.0, earlier_restarts: int = 0) -> float:
    """A control-plane node's partition healed until its apiserver answers /readyz again: its etcd member's
    peer streams are dialled again and it catches up, and the apiserver's etcd readiness check passes again.
    A partition within one probe period of the kubelet's liveness threshold (/livez checks etcd) may have the
    apiserver restarted, up to one period after the heal (/livez still fails while the member catches up): then
    that period and its restart budget count (docs/backends.md)."""
    if partitioned_s + KUBEADM_LIVENESS_PERIOD_S < KUBEADM_APISERVER_LIVENESS_KILL_S:
        return KIND_PARTITION_REJOIN_ALLOWANCE_S
    return max(KIND_PARTITION_REJOIN_ALLOWANCE_S,
               KUBEADM_LIVENESS_PERIOD_S + static_pod_restart_budget_s(Component.APISERVER, 1, earlier_restarts))


def kind_whole_cluster_after_s(apiserver_back_s: float) -> float:
    """The whole cluster healthy after one control-plane node's apiserver was away: that apiserver back, the
    balancer marks it up after one passing check, and its node and static pods are Ready again."""
    return apiserver_back_s + KIND_LB_INTERVAL_S + kind_node_rejoin_s()


# ---- a self-hosted control plane kept by the pod checkpointer (docs/checkpointer.md) --------------------------------
CHECKPOINTER_INTERVAL_S = checkpointer_agent.INTERVAL_S  # one pass every 3 s
CHECKPOINTER_START_ALLOWANCE_S = 10.0  # its own checkpoint started by the kubelet, python3 up, the lock taken
CHECKPOINTER_PASS_ALLOWANCE_S = 3.0  # one pass itself: the runtime's sandboxes (crictl), the API's pods, the copies


def checkpoint_api_ready_s() -> float:
    """Every control-plane node powered off at once until the API answers from the apiservers' checkpoints: the
    nodes boot, the kubelet starts etcd and the checkpointer's own checkpoint from disk, one pass finds the API away
    and the apiserver's parent not running and activates its checkpoint, the kubelet picks that manifest up and the
    apiserver starts (the load balancer's check marks it up)."""
    return (KIND_NODE_BOOT_ALLOWANCE_S + max(STARTUP_ALLOWANCE_S[Component.ETCD], CHECKPOINTER_START_ALLOWANCE_S)
            + CHECKPOINTER_INTERVAL_S + KUBELET_MANIFEST_PICKUP_S + STARTUP_ALLOWANCE_S[Component.APISERVER]
            + KIND_LB_INTERVAL_S)


def checkpoint_hand_back_s() -> float:
    """From the API's return until every node runs the apiserver's parent pod again and no checkpoint of it: the
    kubelet learns its pods from the API and starts the parent (its timers: kind_node_rejoin_s), the apiserver starts,
    and the next pass deactivates the checkpoint, which the kubelet stops."""
    return kind_node_rejoin_s() + CHECKPOINTER_INTERVAL_S + KUBELET_MANIFEST_PICKUP_S


# ANCHORS-style source, copied into docs/gate.md: Let's Encrypt advises renewing 30 days before expiry; Go's
# acme/autocert renews 30 days before (RenewBefore's default), cert-manager before v1 did the same (DefaultRenewBefore)
CERTIFICATE_RENEW_BEFORE_DAYS = 30.0

# N+1 provisioning: the policy's expected load carried at the knee, with every apiserver up and with the busiest one
# down; 1.0 leaves no margin beyond the declared load (harness/objectives/catalog.py, docs/gate.md)
CAPACITY_HEADROOM_X = 1.0
# A step of the capacity scenario that answered this much less than it offered, with the generator not busy, is the
# cluster holding requests back (with users enough to offer it: harness/capacity/stepping.py); a margin for a paced
# closed loop's requests started near a step's edges
CAPACITY_SHORTFALL_PCT = 10.0
# Above this share of its core, the generator's busiest process is its own limit: locust warns at 90 % that it may
# constrain throughput (locust's runners, CPU_WARNING_THRESHOLD), and pacing slips before that
GENERATOR_BUSY_PCT = 80.0
# Above this share of all the cores of the machine the generator runs on, its processes wait for a core whatever
# their own share: a rate short of its offer may then be the generator's, not the cluster's (on the process and
# docker backends the cluster shares that machine). Locust's own 90 % line, applied to the machine
GENERATOR_MACHINE_BUSY_PCT = 90.0

# kube-apiserver watches its serving pair's files and reads them again every minute besides (k8s.io/apiserver's
# dynamiccertificates, DynamicCertKeyPairContent); etcd reads its pair on every new connection (docs/lifecycle.md):
# a rotated pair is served within that minute, plus a margin for the reload itself
CERTIFICATE_RELOAD_S = 70.0

KUBELET_SYNC_PERIOD_S = 60.0  # the kubelet's --sync-frequency default: how stale a running pod's mounted secret may be


def checkpoint_refresh_s() -> float:
    """From a checkpointed pod's secret changing in the API until the node's copy holds the new data: the pass under
    way may have read it just before and still runs, then the interval, then the next pass reads and writes it; plus
    the observer's poll."""
    return 2 * CHECKPOINTER_PASS_ALLOWANCE_S + CHECKPOINTER_INTERVAL_S + OBSERVATION_S


def rollout_undo_s(grace_period_s: float) -> float:
    """From `kubectl rollout undo` of a self-hosted DaemonSet until every pod runs the revision before and is Ready:
    the DaemonSet controller deletes the new pods (stopped within their terminationGracePeriodSeconds), and the old
    ones, which a surge update never stopped, are still Ready; plus one kubelet status period (KUBELET_STATUS_S) for the
    controller to see the deletion through."""
    return grace_period_s + KUBELET_STATUS_S
