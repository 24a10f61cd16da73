"""A member-by-member etcd upgrade: a snapshot taken first and shown restorable, then one member at a time (the
leader last, so the cluster elects once), each healthy on the new release before the next is touched; a member
that is not is rolled back and the upgrade stops. Rolled back newest first, through etcd's downgrade procedure
once every member ran the new minor (harness/faults/etcd_upgrade.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.errors import FaultError, QuorumError
from harness.faults import EtcdUpgrade, Nemesis
from harness.faults.etcd import take_snapshot
from harness.faults.etcd_upgrade import ETCD, MEMBER_READY_S, member_versions
from harness.lifecycle.etcd_policy import check_etcd_step
from harness.scenario.rollout import RolloutResult, component_ready, roll_back, rolling_change
from harness.target.protocol import HostRole, Target, split_id
from harness.toolchain.versions import Version


@dataclass(frozen=True)
class SnapshotCheck:
    """A snapshot and what restoring it showed: the revision and key count it holds."""

    path: Path
    revision: int
    keys: int


def snapshot_restorable(target: Target, path: Path) -> SnapshotCheck:
    """Take a snapshot (etcdctl snapshot save from a healthy member) and restore it into a scratch data directory
    beside it, which checks its integrity hash; FaultError if it does not restore. The scratch directory goes."""
    take_snapshot(target, path)
    host = target.hosts(HostRole.ETCD)[0]
    scratch = path.with_suffix(".restored")
    etcdctl = target.tool_path("etcdctl")
    try:
        target.exec(host, [etcdctl, "snapshot", "restore", str(path), f"--data-dir={scratch}", "--name=verify",
                           "--initial-cluster=verify=http://127.0.0.1:2380",
                           "--initial-advertise-peer-urls=http://127.0.0.1:2380"], timeout=60)
        status = json.loads(target.exec(host, [etcdctl, "snapshot", "status", str(path), "--write-out=json"],
                                        timeout=60) or "{}")
    except (QuorumError, ValueError) as error:
        raise FaultError(f"the snapshot {path.name} taken before the upgrade does not restore: {error}",
                         "do not upgrade: find why etcd's snapshot is damaged first") from None
    finally:
        target.exec(host, ["rm", "-rf", "--", str(scratch)], check=False)
    return SnapshotCheck(path, int(status.get("revision", 0)), int(status.get("totalKey", 0)))


def member_order(target: Target) -> list[str]:
    """The members' hosts, the current leader last."""
    leader = target.etcd.leader()
    hosts = target.hosts(HostRole.ETCD)
    return [h for h in hosts if h != leader] + [h for h in hosts if h == leader]


class MemberGate:
    """When a member's step is done: healthy, and running and reporting (GET /version) the step's release."""

    def __init__(self, release: Version) -> None:
        self.release = release

    def __call__(self, cluster: Target, component_id: str) -> bool:
        host = split_id(component_id)[1]
        if not component_ready(cluster, component_id) or cluster.running_version(ETCD, host) != self.release:
            return False
        answer = cluster.etcd.versions(cluster.etcd_url(host))
        return answer is not None and Version.parse(answer[0]) == self.release


@dataclass
class EtcdUpgradeResult:
    to: Version
    before: dict[str, Version]  # host -> the release its member ran before
    snapshot: SnapshotCheck
    rollout: RolloutResult

    @property
    def completed(self) -> bool:
        return self.rollout.completed


def rolling_etcd_upgrade(cluster: Target, nemesis: Nemesis, to: Version, snapshot: SnapshotCheck, *,
                         ready_timeout_s: float = MEMBER_READY_S, hosts: list[str] | None = None,
                         at_once: int = 1) -> EtcdUpgradeResult:
    """Every member (or those on `hosts`, in that order) onto etcd release `to`, `at_once` at a time (the cluster's
    own strategy: Target.upgrade_max_unavailable), after checking the whole plan against etcd's policy (an
    EtcdReleaseViolation before anything acts). The changes stay applied (the nemesis heals them;
    roll_back_etcd_upgrade undoes them in order)."""
    before = member_versions(cluster)
    order = hosts if hosts is not None else member_order(cluster)
    state = dict(before)
    for host in order:
        check_etcd_step(state, host, to, None)
        state[host] = to
    changes = [EtcdUpgrade(component=f"{ETCD}@{host}", to=str(to)) for host in order]
    rollout = rolling_change(cluster, nemesis, changes, ready_timeout_s=ready_timeout_s, ready=MemberGate(to),
                             at_once=at_once)
    return EtcdUpgradeResult(to, before, snapshot, rollout)


def roll_back_etcd_upgrade(cluster: Target, nemesis: Nemesis, result: EtcdUpgradeResult, *,
                           ready_timeout_s: float = MEMBER_READY_S) -> bool:
    """Every upgraded member back on its release from before, newest first (the first one's heal enables etcd's
    downgrade when the cluster's version had moved up), each healthy on it before the next."""
    originals = set(result.before.values())
    if len(originals) != 1:
        raise FaultError(f"the members ran {', '.join(map(str, sorted(originals)))} before the upgrade",
                         "a rollback goes back to one release; heal the cluster (quorum heal) instead")
    return roll_back(cluster, nemesis, result.rollout, ready_timeout_s=ready_timeout_s, ready=MemberGate(*originals))
