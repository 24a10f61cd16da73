"""etcd faults: remove a member (heal adds it back with a fresh data directory); lose quorum for good (heal is
disaster recovery: every member restored from a snapshot taken before the loss). Both rewrite members' command
lines and data directories, so they need a target whose etcd is Quorum's to rewrite (Capability.ETCD_DATA)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import requests

from harness.clients.etcdctl import etcdctl_argv
from harness.errors import FaultError
from harness.faults.base import Fault, wait_for
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole, Target

ETCD = "etcd"


def member_id(target: Target, host: str) -> int | None:
    return next((mid for mid, name in target.etcd.members().items() if name == host), None)


def _other_url(target: Target, host: str) -> str:
    for other in target.hosts(HostRole.ETCD):
        if other != host and target.etcd.status(target.etcd_url(other), 1.0):
            return target.etcd_url(other)
    raise FaultError(f"no etcd member other than {host} answers")


def peer_url(target: Target, host: str) -> str:
    return _flag(target.command_line(ETCD, host), "--initial-advertise-peer-urls")


def _flag(argv: list[str], name: str) -> str:
    for arg in argv:
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    raise FaultError(f"etcd's command line has no {name}", "the member was not started by Quorum")


def change_membership(target: Target, host: str, path: str, body: dict, applied: Callable[[], bool],
                      timeout_s: float = 30.0) -> None:
    """A membership change, retried while etcd refuses it as unsafe (503 "unhealthy cluster": etcd only
    reconfigures when the remaining members have been connected for at least 5 s, e.g. not right after a
    partition healed) or while the answer is lost (a read timeout during a leader change). A change is
    not idempotent, so before each retry `applied` asks the member list whether the lost one took effect."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            target.etcd.post(_other_url(target, host), path, body, timeout=5.0)
            return
        except requests.HTTPError as error:
            if error.response is None or error.response.status_code != 503 or time.monotonic() > deadline:
                raise FaultError(f"etcd refused {path} for {host}: {error}") from None
        except (requests.ConnectionError, requests.Timeout) as error:
            if time.monotonic() > deadline:
                raise FaultError(f"etcd did not answer {path} for {host} within {timeout_s:.0f} s: {error}") from None
            if _settled(applied):
                return
        time.sleep(0.5)


def _settled(applied: Callable[[], bool]) -> bool:
    """Whether a change whose answer was lost took effect; asked until the member list answers."""
    for _ in range(20):
        try:
            return applied()
        except FaultError:
            time.sleep(0.5)
    return False


def stop_member(target: Target, host: str) -> None:
    target.hold(ETCD, host, "SIGKILL")
    wait_for(lambda: target.pid(ETCD, host) is None, 10, what=f"etcd@{host} to stop")


def wipe_member(target: Target, host: str) -> None:
    target.exec(host, ["rm", "-rf", "--", target.etcd_data_dir(host)])


def _healthy(target: Target, host: str) -> bool:
    return target.health.component_healthy(ETCD, host)


def member_list(target: Target, host: str) -> list[dict]:
    """The member list as another member sees it; FaultError when none answers."""
    try:
        return target.etcd.post(_other_url(target, host), "/v3/cluster/member/list", {}).get("members", [])
    except (requests.RequestException, ValueError) as error:
        raise FaultError(f"no etcd member other than {host} lists the members: {error}") from None


def _peer_listed(target: Target, host: str) -> bool:
    peer = peer_url(target, host)
    return any(peer in m.get("peerURLs", []) for m in member_list(target, host))


def _unstarted_member(target: Target, host: str) -> bool:
    """A member added earlier (by a heal that was interrupted) but never started has an empty name."""
    peer = peer_url(target, host)
    try:
        members = member_list(target, host)
    except FaultError:  # treated as "not known to be added"
        return False
    return any(peer in m.get("peerURLs", []) and not m.get("name") for m in members)


@dataclass
class RemoveMember(Fault):
    """Remove an etcd member from the cluster and stop it. Heal adds it back with a fresh data directory
    (member add, --initial-cluster-state=existing), then restores its normal command line."""

    name = "remove-member"
    requires = (Capability.ETCD_DATA, Capability.HOLD)
    host: str = ""

    def plan(self, target: Target) -> None:
        member = member_id(target, self.host)
        if member is None:
            raise FaultError(f"etcd has no member named {self.host}")
        self.captured["member_id"] = str(member)

    def act(self, target: Target) -> None:
        # removed while it runs (etcd refuses a removal the remaining members could not survive, and says so), then
        # stopped and held: a removed member exits by itself, and restarted meanwhile it would only exit again
        change_membership(target, self.host, "/v3/cluster/member/remove", {"ID": self.captured["member_id"]},
                     applied=lambda: not _peer_listed(target, self.host))
        stop_member(target, self.host)

    def undo(self, target: Target) -> None:
        if member_id(target, self.host) is not None and target.pid(ETCD, self.host) and _healthy(target, self.host):
            target.release(ETCD, self.host)
            return
        members = target.etcd.members()
        if not any(name == self.host for name in members.values()) and not _unstarted_member(target, self.host):
            change_membership(target, self.host, "/v3/cluster/member/add", {"peerURLs": [peer_url(target, self.host)]},
                         applied=lambda: _peer_listed(target, self.host))
        stop_member(target, self.host)
        wipe_member(target, self.host)
        argv = [a.replace("--initial-cluster-state=new", "--initial-cluster-state=existing")
                for a in target.command_line(ETCD, self.host)]
        target.override_command_line(ETCD, self.host, argv)
        target.release(ETCD, self.host)
        wait_for(lambda: _healthy(target, self.host), 60, what=f"etcd@{self.host} to rejoin")
        # its data directory exists now, so the initial-cluster flags are ignored: the configured line is right again
        target.restore_command_line(ETCD, self.host)


def take_snapshot(target: Target, path: Path) -> Path:
    """etcdctl snapshot save from the first healthy member, run inside its host (the snapshot lands in the run
    directory, which the hosts of a target with Capability.ETCD_DATA share)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    host = next((h for h in target.hosts(HostRole.ETCD) if target.etcd.status(target.etcd_url(h), 1.0)), None)
    if host is None:
        raise FaultError("no etcd member answers, so no snapshot can be taken", "quorum status shows the members")
    target.exec(host, etcdctl_argv(target, target.etcd_url(host), "snapshot", "save", str(path)), timeout=60)
    return path


def restore_from_snapshot(target: Target, snapshot: Path) -> None:
    """Disaster recovery: every member restored from `snapshot` into a fresh data directory, then the
    apiservers restarted (their watch caches hold revisions the restored store no longer has)."""
    hosts = target.hosts(HostRole.ETCD)
    for host in hosts:
        stop_member(target, host)
    initial = ",".join(f"{h}={peer_url(target, h)}" for h in hosts)
    token = _flag(target.command_line(ETCD, hosts[0]), "--initial-cluster-token")
    for host in hosts:
        wipe_member(target, host)
        target.exec(host, [target.tool_path("etcdctl"), "snapshot", "restore", str(snapshot), f"--name={host}",
                           f"--initial-cluster={initial}", f"--initial-cluster-token={token}",
                           f"--initial-advertise-peer-urls={peer_url(target, host)}",
                           f"--data-dir={target.etcd_data_dir(host)}"], timeout=60)
    for host in hosts:
        target.restore_command_line(ETCD, host)
        target.release(ETCD, host)
    wait_for(lambda: all(_healthy(target, h) for h in hosts), 60, what="every restored etcd member")
    # killed, not stopped gracefully: a graceful stop would keep serving through the apiserver's shutdown delay
    # (clusters/ha3.yaml), from a cache the restore made stale
    for controller in target.component_hosts("kube-apiserver"):
        target.signal("kube-apiserver", controller, "SIGKILL")
    time.sleep(0.2)


@dataclass
class LoseQuorumForGood(Fault):
    """Destroy a majority of etcd members: processes stopped and data directories deleted. A snapshot is
    taken first; heal restores the whole cluster from it (the documented disaster-recovery procedure)."""

    name = "lose-quorum"
    requires = (Capability.ETCD_DATA, Capability.HOLD)
    hosts: list[str] = field(default_factory=list)  # default: a majority of the etcd hosts

    def plan(self, target: Target) -> None:
        names = target.hosts(HostRole.ETCD)
        if not self.hosts:
            self.hosts = names[: len(names) // 2 + 1]
        if len(self.hosts) <= len(names) // 2:
            raise FaultError(f"{self.hosts} is not a majority of {names}: quorum would survive")
        snapshot = target.run_dir / "snapshots" / f"{self.id}.db"
        take_snapshot(target, snapshot)
        self.captured["snapshot"] = str(snapshot)

    def act(self, target: Target) -> None:
        for host in self.hosts:
            stop_member(target, host)
            wipe_member(target, host)

    def undo(self, target: Target) -> None:
        snapshot = Path(self.captured.get("snapshot", ""))
        if not snapshot.is_file():
            # plan never finished: nothing was destroyed, only make sure nothing stays held
            for host in target.hosts(HostRole.ETCD):
                target.release(ETCD, host)
            return
        hosts = target.hosts(HostRole.ETCD)
        if all(_healthy(target, h) for h in hosts) and not any(target.held(ETCD, h) for h in self.hosts):
            return
        restore_from_snapshot(target, snapshot)
