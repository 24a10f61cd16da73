"""etcd faults: remove a member (heal adds it back with a fresh data directory); lose quorum for good
(heal is disaster recovery: every member restored from a snapshot taken before the loss)."""

from __future__ import annotations

import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import requests

from harness.backends.process.target import Cluster
from harness.components import etcd as etcd_component
from harness.errors import FaultError
from harness.clients.etcdctl import etcdctl
from harness.faults.base import Fault, wait_for
from harness.faults.process import _signal
from harness.clients.health import probe
from harness.shell import run
from harness.topology import Component


def _member_id(cluster: Cluster, host: str) -> int | None:
    return next((mid for mid, name in cluster.etcd.members().items() if name == host), None)


def _other_url(cluster: Cluster, host: str) -> str:
    for h in cluster.topology.etcd_hosts:
        if h.name != host and cluster.etcd.status(etcd_component.client_url(cluster.topology, h), 1.0):
            return etcd_component.client_url(cluster.topology, h)
    raise FaultError(f"no etcd member other than {host} answers")


def _reconfigure(cluster: Cluster, host: str, path: str, body: dict, applied: Callable[[], bool],
                 timeout_s: float = 30.0) -> None:
    """A membership change, retried while etcd refuses it as unsafe (503 "unhealthy cluster": etcd only
    reconfigures when the remaining members have been connected for at least 5 s, e.g. not right after a
    partition healed) or while the answer is lost (a read timeout during a leader change). A change is
    not idempotent, so before each retry `applied` asks the member list whether the lost one took effect."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            cluster.etcd.post(_other_url(cluster, host), path, body, timeout=5.0)
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


def _stop_member(cluster: Cluster, host: str) -> None:
    control = cluster.control(f"etcd@{host}")
    control.hold()
    pid = control.child_pid()
    _signal(pid, signal.SIGCONT)
    _signal(pid, signal.SIGKILL)
    wait_for(lambda: control.child_pid() is None, 10, what=f"etcd@{host} to stop")


def _data_dir(cluster: Cluster, host: str) -> Path:
    return cluster.layout.data_dir(host) / "etcd"


def _healthy(cluster: Cluster, host: str) -> bool:
    return probe(cluster.spec(Component.ETCD, host).health, 1.0)


@dataclass
class RemoveMember(Fault):
    """Remove an etcd member from the cluster and stop it. Heal adds it back with a fresh data directory
    (member add, --initial-cluster-state=existing), then restores its normal command line."""

    name = "remove-member"
    host: str = ""

    def plan(self, cluster: Cluster) -> None:
        member = _member_id(cluster, self.host)
        if member is None:
            raise FaultError(f"etcd has no member named {self.host}")
        self.captured["member_id"] = str(member)

    def act(self, cluster: Cluster) -> None:
        cluster.control(f"etcd@{self.host}").hold()
        _reconfigure(cluster, self.host, "/v3/cluster/member/remove", {"ID": self.captured["member_id"]},
                     applied=lambda: not _peer_listed(cluster, self.host))
        _stop_member(cluster, self.host)

    def undo(self, cluster: Cluster) -> None:
        control = cluster.control(f"etcd@{self.host}")
        if _member_id(cluster, self.host) is not None and control.child_pid() and _healthy(cluster, self.host):
            control.release()
            return
        topology = cluster.topology
        host = topology.host(self.host)
        members = cluster.etcd.members()
        if not any(name == self.host for name in members.values()) and not _unstarted_member(cluster, host):
            _reconfigure(cluster, self.host, "/v3/cluster/member/add",
                         {"peerURLs": [etcd_component.peer_url(topology, host)]},
                         applied=lambda: _peer_listed(cluster, self.host))
        _stop_member(cluster, self.host)
        shutil.rmtree(_data_dir(cluster, self.host), ignore_errors=True)
        argv = [a.replace("--initial-cluster-state=new", "--initial-cluster-state=existing") for a in control.spec().argv]
        control.override(argv)
        control.release()
        control.kick()
        wait_for(lambda: _healthy(cluster, self.host), 60, what=f"etcd@{self.host} to rejoin")
        control.clear_override()  # its data directory exists now: the initial-cluster flags are ignored


def _member_list(cluster: Cluster, host: str) -> list[dict]:
    """The member list as another member sees it; FaultError when none answers."""
    try:
        return cluster.etcd.post(_other_url(cluster, host), "/v3/cluster/member/list", {}).get("members", [])
    except (requests.RequestException, ValueError) as error:
        raise FaultError(f"no etcd member other than {host} lists the members: {error}") from None


def _peer_listed(cluster: Cluster, host: str) -> bool:
    peer = etcd_component.peer_url(cluster.topology, cluster.topology.host(host))
    return any(peer in m.get("peerURLs", []) for m in _member_list(cluster, host))


def _unstarted_member(cluster: Cluster, host) -> bool:
    """A member added earlier (by a heal that was interrupted) but never started has an empty name."""
    peer = etcd_component.peer_url(cluster.topology, host)
    try:
        members = _member_list(cluster, host.name)
    except FaultError:  # treated as "not known to be added"
        return False
    return any(peer in m.get("peerURLs", []) and not m.get("name") for m in members)


def take_snapshot(cluster: Cluster, path: Path) -> Path:
    """etcdctl snapshot save from the first healthy member."""
    path.parent.mkdir(parents=True, exist_ok=True)
    url = next(u for u in cluster.etcd_urls if cluster.etcd.status(u, 1.0))
    etcdctl(cluster, url, "snapshot", "save", str(path), timeout=60)
    return path


def restore_from_snapshot(cluster: Cluster, snapshot: Path) -> None:
    """Disaster recovery: every member restored from `snapshot` into a fresh data directory, then the
    apiservers restarted (their watch caches hold revisions the restored store no longer has)."""
    topology = cluster.topology
    hosts = topology.etcd_hosts
    for host in hosts:
        _stop_member(cluster, host.name)
    initial = ",".join(f"{h.name}={etcd_component.peer_url(topology, h)}" for h in hosts)
    for host in hosts:
        data = _data_dir(cluster, host.name)
        shutil.rmtree(data, ignore_errors=True)
        data.parent.mkdir(parents=True, exist_ok=True)
        run([str(cluster.layout.binary("etcdctl")), "snapshot", "restore", str(snapshot), f"--name={host.name}",
             f"--initial-cluster={initial}", f"--initial-cluster-token=quorum-{topology.name}",
             f"--initial-advertise-peer-urls={etcd_component.peer_url(topology, host)}", f"--data-dir={data}"],
            timeout=60)
    for host in hosts:
        control = cluster.control(f"etcd@{host.name}")
        control.clear_override()
        control.release()
        control.kick()
    wait_for(lambda: all(_healthy(cluster, h.name) for h in hosts), 60, what="every restored etcd member")
    for controller in topology.controllers:
        pid = cluster.control(f"kube-apiserver@{controller.name}").child_pid()
        _signal(pid, signal.SIGTERM)
    time.sleep(0.2)


@dataclass
class LoseQuorumForGood(Fault):
    """Destroy a majority of etcd members: processes stopped and data directories deleted. A snapshot is
    taken first; heal restores the whole cluster from it (the documented disaster-recovery procedure)."""

    name = "lose-quorum"
    hosts: list[str] = field(default_factory=list)  # default: a majority of the etcd hosts

    def plan(self, cluster: Cluster) -> None:
        names = [h.name for h in cluster.topology.etcd_hosts]
        if not self.hosts:
            self.hosts = names[: len(names) // 2 + 1]
        if len(self.hosts) <= len(names) // 2:
            raise FaultError(f"{self.hosts} is not a majority of {names}: quorum would survive")
        snapshot = cluster.run_dir / "snapshots" / f"{self.id}.db"
        take_snapshot(cluster, snapshot)
        self.captured["snapshot"] = str(snapshot)

    def act(self, cluster: Cluster) -> None:
        for host in self.hosts:
            _stop_member(cluster, host)
            shutil.rmtree(_data_dir(cluster, host), ignore_errors=True)

    def undo(self, cluster: Cluster) -> None:
        snapshot = Path(self.captured.get("snapshot", ""))
        if not snapshot.is_file():
            # plan never finished: nothing was destroyed, only make sure nothing stays held
            for host in cluster.topology.etcd_hosts:
                cluster.control(f"etcd@{host.name}").release()
                cluster.control(f"etcd@{host.name}").kick()
            return
        if all(_healthy(cluster, h.name) for h in cluster.topology.etcd_hosts) and not any(
                cluster.control(f"etcd@{h}").held() for h in self.hosts):
            return
        restore_from_snapshot(cluster, snapshot)
