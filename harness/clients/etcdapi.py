"""etcd status through its JSON gateway (POST /v3/...), with the harness's client certificate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests

from harness.clients.health import session
from harness.pki import Pair


@dataclass(frozen=True)
class MemberStatus:
    url: str
    member_id: int
    leader_id: int
    revision: int
    raft_term: int
    storage_version: str = ""  # etcd >= 3.6: the schema its data is kept in (a downgrade waits for it)
    downgrade_target: str = ""  # etcd >= 3.6: the version an enabled downgrade goes to ("" when none is)

    @property
    def is_leader(self) -> bool:
        return self.member_id == self.leader_id


@dataclass(frozen=True)
class EtcdCredentials:
    """What a client needs for a TLS etcd: the CA that signed the members' certificates, and a client pair."""

    ca: Path
    client: Pair


class EtcdClient:
    def __init__(self, urls: list[str], ca: str | None, client: Pair | None,
                 host_of: Callable[[str], str] = str) -> None:
        """host_of: a member's name -> the host the harness knows it by (on kind: the node's short name)."""
        self.urls = urls
        self.host_of = host_of
        self.session = session()
        self.session.verify = ca if ca else False
        if client is not None:
            self.session.cert = (str(client.cert), str(client.key))

    def post(self, url: str, path: str, body: dict, timeout: float = 2.0) -> dict:
        response = self.session.post(f"{url}{path}", json=body, timeout=timeout)
        response.raise_for_status()
        return response.json()

    def metrics(self, url: str, timeout: float = 5.0) -> str | None:
        """A member's /metrics (Prometheus' text format), or None if it did not answer."""
        try:
            response = self.session.get(f"{url}/metrics", timeout=timeout)
            response.raise_for_status()
        except requests.RequestException:
            return None
        return response.text

    def status(self, url: str, timeout: float = 2.0) -> MemberStatus | None:
        try:
            data = self.post(url, "/v3/maintenance/status", {}, timeout)
        except (requests.RequestException, ValueError):
            return None
        header, downgrade = data.get("header", {}), data.get("downgradeInfo") or {}
        return MemberStatus(url, int(header.get("member_id", 0)), int(data.get("leader", 0)),
                            int(header.get("revision", 0)), int(data.get("raftTerm", header.get("raft_term", 0))),
                            str(data.get("storageVersion", "")),
                            str(downgrade.get("targetVersion", "")) if downgrade.get("enabled") else "")

    def versions(self, url: str, timeout: float = 2.0) -> tuple[str, str] | None:
        """A member's own release and the cluster's version (GET /version: etcdserver, etcdcluster), or None if it
        did not answer. The cluster's version is the lowest minor its members run, once every member agreed."""
        try:
            response = self.session.get(f"{url}/version", timeout=timeout)
            response.raise_for_status()
            data = response.json()
        except (requests.RequestException, ValueError):
            return None
        return str(data.get("etcdserver", "")), str(data.get("etcdcluster", ""))

    def members(self, timeout: float = 2.0) -> dict[int, str]:
        """member id -> host (the member's name, through host_of), from the first member that answers."""
        for url in self.urls:
            try:
                data = self.post(url, "/v3/cluster/member/list", {}, timeout)
            except (requests.RequestException, ValueError):
                continue
            return {int(m["ID"]): self.host_of(m.get("name", "")) for m in data.get("members", [])}
        return {}

    def leader(self, timeout: float = 1.0) -> str | None:
        """Host of the member that the answering members agree is leader, or None."""
        ids = {s.leader_id for url in self.urls if (s := self.status(url, timeout)) and s.leader_id}
        if len(ids) != 1:
            return None
        return self.members(timeout).get(ids.pop())
