"""etcd quorum and partitions: what a 3-member (or larger) etcd survives, and what it must refuse."""

import time

import pytest

from harness.checkers import durability, failover_time, monotonicity, write_outage
from harness.checkers.recovery import recovered_within
from harness.faults import IsolateEtcdLeader, LoseQuorumForGood, RemoveMember, Stop
from harness.monitors.etcd_writer import etcd_client
from harness.objectives.bounds import WRITER_TIMEOUT_S
from harness.objectives.catalog import configured_bound
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge, wait_all_healthy, wait_recorded
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import etcd_election_s
from harness.wait import until



def converged(cluster, timeout_s=20.0):
    """Every member at the same revision (and so the same data: revisions are raft-ordered)."""
    revisions: set[int] = set()

    def one_revision() -> bool:
        nonlocal revisions
        statuses = [cluster.etcd.status(u) for u in cluster.etcd_urls]
        revisions = {s.revision for s in statuses if s}
        return len(revisions) == 1 and all(statuses)

    if until(one_revision, timeout_s, 0.2).held:
        return revisions.pop()
    raise AssertionError(f"members did not converge on one revision within {timeout_s:.0f}s: {revisions}")


def answered(cluster, host, operation, key):
    """One request straight to one member: "put", "get" (linearizable) or "stale-get" (serializable).
    True if the member answered it."""
    client = etcd_client(cluster, cluster.etcd_url(host), timeout=WRITER_TIMEOUT_S)
    try:
        if operation == "put":
            client.put(key, "x")
        else:
            client.get(key, serializable=(operation == "stale-get"))
        return True
    except Exception:  # noqa: BLE001 - any refusal or timeout means "not answered"
        return False
    finally:
        client.close()


@pytest.mark.conformance
def test_members_use_tls_on_peer_and_client_urls(cluster):
    """Every member's peer and client URLs are https (Typhoon: etcd peers talk TLS); a member reachable in
    plain text on either port would let anyone on the network read or join the cluster."""
    members = cluster.etcd.post(cluster.etcd_urls[0], "/v3/cluster/member/list", {})["members"]
    plain = [(m.get("name"), url) for m in members for url in m.get("peerURLs", []) + m.get("clientURLs", [])
             if not url.startswith("https://")]
    assert len(members) == len(cluster.hosts(HostRole.ETCD))
    assert not plain, f"etcd URLs without TLS: {plain}"


@pytest.mark.destructive
@pytest.mark.measures("etcd_leader_change_s", "etcd_write_stall_s", "lost_writes")
def test_writes_continue_when_the_leader_of_three_dies(cluster, nemesis, etcd_writer, leases, history):
    """Crash the etcd leader (SIGKILL) and keep it down (so a restart by the cluster's self-healing cannot mask a
    lost quorum). The others elect a new leader within about one election timeout (bound: 3 x
    election timeout + 0.5 s), writes pause only for that election plus one client timeout, and no acknowledged
    write is lost. A member count that cannot lose one member (2) fails here."""
    change_bound = configured_bound("etcd_leader_change_s", cluster)
    stall_bound = configured_bound("etcd_write_stall_s", cluster)
    time.sleep(1.0)
    leader = leases.holder("etcd")  # read at the kill: a leader read earlier may have lost an election since
    with nemesis.fault(Stop(component=f"etcd@{leader}", signal="SIGKILL")):
        time.sleep(stall_bound + 3)
    etcd_writer.stop()
    change, stall = failover_time(history, subject="etcd", max_s=change_bound), write_outage(history, max_gap_s=stall_bound)
    writes = durability(history, system="etcd")
    verdicts = judge(
        history, change, stall, writes, monotonicity(history, f="etcd.put"),
        measures=[from_verdict("etcd_leader_change_s", change, "failover_s", bound=change_bound),
                  from_verdict("etcd_write_stall_s", stall, "longest_gap_s", bound=stall_bound),
                  from_verdict("lost_writes", writes, "lost")],
    )
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.measures("etcd_write_stall_s", "lost_writes")
def test_without_quorum_writes_and_linearizable_reads_stop_and_nothing_is_lost(cluster, nemesis, etcd_writer,
                                                                                  history):
    """Crash two members of three and keep them down. The survivor accepts no write and answers no linearizable
    read (it cannot know it is current); a serializable read still answers from its local copy. After heal the
    members answer again within the cluster's own return time (e.g. a supervisor's restart, or a kubelet picking
    the manifests up again), writes resume within a leader election plus one client timeout of that, and every
    write acknowledged before, during or after is there."""
    etcd, hosts = cluster.etcd_settings(), cluster.hosts(HostRole.ETCD)
    survivor, stopped = hosts[-1], hosts[: len(hosts) // 2 + 1]
    faults = [nemesis.inject(Stop(component=f"etcd@{h}", signal="SIGKILL")) for h in stopped]
    time.sleep(3 * etcd_election_s(etcd))
    lost_at = time.monotonic()
    put_ok = answered(cluster, survivor, "put", "/quorum/no-quorum-probe")
    read_ok = answered(cluster, survivor, "get", "/quorum/no-quorum-probe")
    stale_ok = answered(cluster, survivor, "stale-get", "/quorum/no-quorum-probe")
    time.sleep(2)
    during = (lost_at, time.monotonic())
    for fault in faults:
        nemesis.heal(fault)
    healed = time.monotonic()
    return_max_s = {h: cluster.held_return_s("etcd", h) for h in stopped}
    back = wait_all_healthy(cluster, {f"etcd@{h}": return_max_s[h] for h in stopped}, since=healed)
    returned = {h: back[f"etcd@{h}"] for h in stopped}
    quorum_back = time.monotonic()
    outage_max_s = configured_bound("etcd_write_stall_s", cluster)
    time.sleep(outage_max_s + 1)
    etcd_writer.stop()
    acknowledged_during = [o for o in history.ops_of("etcd.put") if o.ok and during[0] <= o.complete <= during[1]]
    writes, stall = durability(history, system="etcd"), write_outage(history, window=(quorum_back, time.monotonic()),
                                                                      max_gap_s=outage_max_s)
    verdicts = judge(history, writes, stall,
                     measures=[from_verdict("etcd_write_stall_s", stall, "longest_gap_s", bound=outage_max_s),
                               from_verdict("lost_writes", writes, "lost")],
                     figures={"survivor": survivor, "put_ok": put_ok, "linearizable_read_ok": read_ok,
                              "serializable_read_ok": stale_ok, "acknowledged_without_quorum": len(acknowledged_during),
                              "returned_after_heal_s": returned, "return_max_s": return_max_s})
    assert not put_ok and not read_ok, "a member without quorum acknowledged a write or a linearizable read"
    assert not acknowledged_during, f"{len(acknowledged_during)} writes acknowledged without quorum"
    assert stale_ok, "a serializable read should still be answered by the survivor"
    assert all(t is not None for t in returned.values()), (
        f"members not answering within what their self-healing promises after heal: {returned} (s; bounds "
        f"{return_max_s})")
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.measures("etcd_leader_change_s", "lost_writes")
def test_a_partitioned_leader_is_replaced_and_its_side_accepts_no_writes(cluster, nemesis, etcd_writer, leases,
                                                                           history):
    """Cut the etcd leader's host off from the other members' hosts. The
    majority elects a new leader within the election timeout scale; the old leader, alone, acknowledges no write;
    after heal all members converge on one revision, and no acknowledged write is lost."""
    bound = configured_bound("etcd_leader_change_s", cluster)
    with nemesis.fault(IsolateEtcdLeader()) as fault:
        old = fault.captured["leader"]
        until(lambda: leases.identity("etcd", timeout=5) != old, bound + 2, 0.1)
        minority_writes = [answered(cluster, old, "put", f"/quorum/minority/{i}") for i in range(3)]
    revision = converged(cluster)
    etcd_writer.stop()
    change, writes = failover_time(history, subject="etcd", max_s=bound), durability(history, system="etcd")
    verdicts = judge(history, change, writes,
                     measures=[from_verdict("etcd_leader_change_s", change, "failover_s", bound=bound),
                               from_verdict("lost_writes", writes, "lost")],
                     figures={"old_leader": old, "minority_writes_acknowledged": sum(minority_writes),
                              "converged_revision": revision})
    assert not any(minority_writes), f"the isolated old leader {old} acknowledged writes: {minority_writes}"
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.requires(Capability.ETCD_DATA)
@pytest.mark.measures("etcd_write_stall_s", "lost_writes")
def test_a_removed_member_rejoins_with_a_fresh_data_directory(cluster, nemesis, etcd_writer, leases, history):
    """Remove a follower from the cluster (member remove) while writes go on; add it back with an empty data
    directory (member add, initial-cluster-state existing). Writes continue throughout, the member catches
    up, and all members converge with nothing lost."""
    follower = next(h for h in cluster.hosts(HostRole.ETCD) if h != leases.holder("etcd"))
    with nemesis.fault(RemoveMember(host=follower)):
        assert follower not in cluster.etcd.members().values()
        time.sleep(3)
    assert sorted(cluster.etcd.members().values()) == sorted(cluster.hosts(HostRole.ETCD))
    converged(cluster)
    etcd_writer.stop()
    bound = configured_bound("etcd_write_stall_s", cluster)
    writes, stall = durability(history, system="etcd"), write_outage(history, max_gap_s=bound)
    verdicts = judge(history, writes, stall,
                     measures=[from_verdict("etcd_write_stall_s", stall, "longest_gap_s", bound=bound),
                               from_verdict("lost_writes", writes, "lost")])
    assert all(verdicts), explain_all(verdicts)


@pytest.mark.destructive
@pytest.mark.slow
@pytest.mark.requires(Capability.ETCD_DATA)
@pytest.mark.measures("lost_writes", "snapshot_restore_s")
def test_disaster_recovery_from_a_snapshot_when_quorum_is_lost_for_good(cluster, nemesis, etcd_writer, history):
    """Destroy a majority of members (processes and data). The surviving member takes no write. Restore every
    member from a snapshot taken just before: every write acknowledged before the snapshot is back, the cluster
    serves again, and the Kubernetes API is ready on top of it."""
    survivor = cluster.hosts(HostRole.ETCD)[-1]  # LoseQuorumForGood destroys the first majority
    time.sleep(3)
    etcd_writer.stop()  # everything acknowledged so far must survive: the snapshot is taken after this
    with nemesis.fault(LoseQuorumForGood()):
        time.sleep(2)
        tries = [answered(cluster, survivor, "put", "/quorum/dr") for _ in range(2)]  # each may wait its timeout
    etcd_writer.read_back()
    bound = configured_bound("snapshot_restore_s", cluster)
    wait_recorded(history, "cluster.healthy", lambda: not cluster.health.problems(), timeout_s=bound + 15.0,
                  interval_s=1.0)
    writes = durability(history, system="etcd")
    serving = recovered_within(history, event="cluster.healthy", what="the whole cluster healthy", max_s=bound,
                               since="end")
    verdicts = judge(history, writes, serving, figures={"survivor_took_writes": sum(tries)},
                     measures=[from_verdict("snapshot_restore_s", serving, "recovered_after_s", bound=bound),
                               from_verdict("lost_writes", writes, "lost")])
    assert not any(tries), f"the surviving member {survivor} acknowledged a write without quorum"
    assert cluster.health.problems() == [], f"not healthy after the restore: {cluster.health.problems()}"
    assert all(verdicts), explain_all(verdicts)
