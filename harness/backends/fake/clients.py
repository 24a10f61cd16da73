"""The fake target's API and etcd: what the protocol's callers ask of them, answered from the model; and its Clients
part (harness/target/clients.py), which hands them out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import requests

from harness.clients.etcdapi import EtcdClient
from harness.toolchain.versions import Version
from harness.target.clients import Clients
from harness.target.hosts import HostRole
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.fake.target import FakeTarget


@dataclass(frozen=True)
class FakeLease:
    identity: str
    renew_time: str | None = None
    transitions: int = 0


class FakeApi:
    """What the protocol's callers ask of the API: readiness and lease holders, from the model."""

    def __init__(self, target: "FakeTarget") -> None:
        self.target = target
        self.endpoint = f"https://{target.address(target.hosts(HostRole.CONTROLLER)[0])}:6443"

    def ready(self, timeout: float = 2.0) -> bool:
        return any(self.target.health.component_healthy(Component.APISERVER, h)
                   for h in self.target.component_hosts(Component.APISERVER))

    def lease_holder(self, name: str, timeout: float = 2.0) -> FakeLease | None:
        holder = self.target.model()["leases"].get(name)
        return FakeLease(holder) if holder else None

    def on_a_new_connection(self) -> "FakeApi":
        return self


class FakeEtcd(EtcdClient):
    """The real EtcdClient's logic over a model: its gateway calls are answered from fake.json."""

    def __init__(self, target: "FakeTarget") -> None:
        super().__init__(target.etcd_urls, None, None)
        self.target = target

    def post(self, url: str, path: str, body: dict, timeout: float = 2.0) -> dict:
        model = self.target.model()
        host = next(h for h in self.target.hosts(HostRole.ETCD) if url == self.target.etcd_url(h))
        if not self.target.health.component_healthy(Component.ETCD, host):
            raise requests.ConnectionError(f"etcd on {host} does not answer")
        members = model["etcd_members"]  # host -> member id
        if path == "/v3/maintenance/status":
            leader = model["etcd_leader"]
            return {"header": {"member_id": members.get(host, 0), "revision": model["revision"]},
                    "leader": members.get(leader, 0) if leader else 0, "storageVersion": self.cluster_version(model),
                    "downgradeInfo": {"enabled": bool(model.get("etcd_downgrade")),
                                      "targetVersion": model.get("etcd_downgrade", "")}}
        if path == "/v3/cluster/member/list":
            return {"members": [{"ID": mid, "name": h, "peerURLs": [f"https://{self.target.address(h)}:2380"]}
                                for h, mid in members.items()]}
        with self.target.changing() as changed:
            if path == "/v3/cluster/member/remove":
                changed["etcd_members"] = {h: mid for h, mid in members.items() if str(mid) != str(body["ID"])}
            elif path == "/v3/cluster/member/add":
                peer = body["peerURLs"][0]
                added = next(h for h in self.target.hosts(HostRole.ETCD) if self.target.address(h) in peer)
                changed["etcd_members"] = {**members, added: max(members.values(), default=0) + 1}
            elif path == "/v3/maintenance/downgrade" and body["action"] == "ENABLE":
                changed["etcd_downgrade"] = f"{body['version']}.0"
            changed["calls"].append(["etcd", path, *([body["action"]] if "action" in body else [])])
        return {}

    def cluster_version(self, model: dict) -> str:
        """As etcd decides it: the lowest minor its members run, never above a downgrade's target once enabled."""
        running = [v for h in self.target.hosts(HostRole.ETCD) if (v := self.target.running_version("etcd", h))]
        lowest = min(running, default=None)
        decided = f"{lowest.major}.{lowest.minor}.0" if lowest else "not_decided"
        target = model.get("etcd_downgrade")  # done once every member runs it
        return target if target and lowest and lowest > Version.parse(target) else decided

    def versions(self, url: str, timeout: float = 2.0) -> tuple[str, str] | None:
        host = next(h for h in self.target.hosts(HostRole.ETCD) if url == self.target.etcd_url(h))
        release = self.target.running_version("etcd", host)
        if release is None or not self.target.health.component_healthy(Component.ETCD, host):
            return None
        return f"{release.major}.{release.minor}.{release.patch}", self.cluster_version(self.target.model())


class ModelClients(Clients):
    """The fake target's Clients part: its API and etcd answer from the model; nothing is sent anywhere."""

    run_dir: Path

    @property
    def api(self) -> FakeApi:
        return FakeApi(self)  # type: ignore[arg-type]  # the FakeTarget this part belongs to

    def apiserver(self, host: str) -> FakeApi:
        return FakeApi(self)  # type: ignore[arg-type]

    @property
    def admin_kubeconfig(self) -> Path:
        return self.run_dir / "admin.kubeconfig"

    @property
    def etcd(self) -> FakeEtcd:
        return FakeEtcd(self)  # type: ignore[arg-type]

    @property
    def etcd_urls(self) -> list[str]:
        hosts = self.hosts(HostRole.ETCD)  # type: ignore[attr-defined]  # the model's, through the target
        return [self.etcd_url(h) for h in hosts]

    def etcd_url(self, host: str) -> str:
        return f"https://{self.address(host)}:2379"  # type: ignore[attr-defined]

    @property
    def etcd_credentials(self) -> None:
        return None

    def ensure_local(self) -> None:
        """Nothing leaves the machine: there is nothing to send to."""
