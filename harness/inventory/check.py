"""`quorum inventory check`: reach every piece an inventory names, read only, and say what answered.

The API through the inventory's endpoint with the kubeconfig's credentials (its version; the apiserver addresses
it advertises, which must include the inventory's controllers, or the kubeconfig is another cluster's; the lease
holders), each host over SSH (what runs there, its live flags and version) and etcd with the inventory's client
certificate (members and leader). Nothing is changed anywhere."""

from __future__ import annotations

import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.inventory.discover import discover
from harness.inventory.load import local_path
from harness.inventory.model import HostRole, Inventory
from harness.pki import Pair
from harness.remote.ssh import RemoteError, SshHost

LEASES = ("kube-controller-manager", "kube-scheduler")


@dataclass
class Row:
    piece: str
    ok: bool
    detail: str
    fix: str = ""


def ssh_hosts(inventory: Inventory, base: Path) -> dict[str, SshHost]:
    hosts = {}
    for host in inventory.hosts:
        settings = inventory.ssh_for(host.name)
        key = local_path(settings.key_file, base) if settings.key_file else None
        hosts[host.name] = SshHost(host.name, host.address, settings, local_path(settings.known_hosts, base), key)
    return hosts


def addresses_of(name: str) -> set[str]:
    try:
        return {info[4][0] for info in socket.getaddrinfo(name, None)}
    except socket.gaierror:
        return set()


def api_rows(inventory: Inventory, base: Path) -> list[Row]:
    from kubernetes import config

    from harness.remote.credentials import api_credentials
    from harness.errors import ClusterError

    piece = f"API {inventory.api_endpoint}"
    rows = []
    # the credentials as a run uses them: a kubeconfig of the one context whose server is api_endpoint (so they go
    # nowhere else, whatever server the user's kubeconfig names), its exec plugins refused by name, in a private
    # directory gone after the check
    with tempfile.TemporaryDirectory(prefix="quorum-inventory-check-") as private:
        try:
            credentials = api_credentials(inventory, base, Path(private))
            api = config.new_client_from_config(str(credentials.kubeconfig), persist_config=False)
        except ClusterError as error:
            return [Row("kubeconfig", False, f"unusable: {error.problem}", error.fix)]
        except (config.ConfigException, OSError, ValueError) as error:
            return [Row("kubeconfig", False, f"unusable: {error}", "check kubeconfig.path and kubeconfig.context")]
        _ask_the_api(api, inventory, piece, rows)
    return rows


def _ask_the_api(api, inventory: Inventory, piece: str, rows: list[Row]) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    from urllib3.exceptions import HTTPError

    try:
        version = client.VersionApi(api).get_code(_request_timeout=10).git_version
        rows.append(Row(piece, True, f"Kubernetes {version}"))
        slices = client.DiscoveryV1Api(api).list_namespaced_endpoint_slice(
            "default", label_selector="kubernetes.io/service-name=kubernetes", _request_timeout=10)
        advertised = {a for s in slices.items for e in (s.endpoints or []) for a in e.addresses}
        controllers = {h.name: addresses_of(h.address) for h in inventory.hosts if HostRole.CONTROLLER in h.roles}
        matched = sorted(name for name, addresses in controllers.items() if addresses & advertised)
        rows.append(Row("apiservers", bool(matched),
                        f"advertised at {sorted(advertised)}; controllers among them: {matched or 'none'}",
                        "" if matched else "this kubeconfig is another cluster's, or the controllers' addresses are "
                                           "wrong: the API advertises its apiservers at the addresses above"))
        coordination = client.CoordinationV1Api(api)
        for name in LEASES:
            holder = coordination.read_namespaced_lease(name, "kube-system", _request_timeout=10).spec.holder_identity
            rows.append(Row(f"lease {name}", bool(holder), f"held by {holder or 'nobody'}",
                            "" if holder else f"is {name} running with leader election?"))
    except ApiException as error:
        rows.append(Row(piece, False, f"HTTP {error.status} {error.reason}",
                        "check the kubeconfig's credentials: they must be allowed to read leases and endpoint slices"))
    except (HTTPError, OSError) as error:
        rows.append(Row(piece, False, f"unreachable: {error}",
                        "check api_endpoint (the load balancer's https://address:port) and the kubeconfig's CA"))
    except ValueError as error:  # an answer the client's models refuse: not a Kubernetes API
        rows.append(Row(piece, False, f"an answer that is not the Kubernetes API's: {str(error)[:300]}",
                        "check api_endpoint: it must be the load balancer in front of the apiservers"))


def host_rows(inventory: Inventory, hosts: dict[str, SshHost]) -> list[Row]:
    rows = []
    for name, ssh in hosts.items():
        try:
            whoami = ssh.run(["id", "-un"])
            rows.append(Row(f"ssh {name}", whoami.ok, f"{ssh.where} as {whoami.stdout.strip()}"
                            + (" with sudo" if ssh.settings.sudo else "")))
            for found in discover(inventory, ssh):
                detail = (f"{found.how}, pid {found.pids[0]}, {found.version}, {len(found.flags)} flags" if found.ok
                          else found.problem)
                rows.append(Row(f"{found.component.value}@{name}", found.ok, detail, found.fix))
        except RemoteError as error:
            rows.append(Row(f"ssh {name}", False, error.problem, error.fix))
    return rows


def etcd_rows(inventory: Inventory, base: Path, hosts: dict[str, SshHost]) -> list[Row]:
    from harness.clients.etcdapi import EtcdClient

    access = inventory.etcd
    if access is None:
        return [Row("etcd", False, "no etcd: section", "add etcd.endpoints and the client certificate's paths")]
    with tempfile.TemporaryDirectory(prefix="quorum-etcd-") as scratch:  # mode 0700; gone when the check ends
        if access.on_hosts:
            source = hosts[inventory.hosts_with(HostRole.ETCD)[0]]
            try:
                paths = []
                for field in ("ca", "cert", "key"):
                    path = Path(scratch) / field
                    path.touch(mode=0o600)
                    path.write_bytes(source.read_file(getattr(access, field)))
                    paths.append(path)
            except RemoteError as error:
                return [Row("etcd", False, error.problem, error.fix)]
            ca, cert, key = paths
        else:
            ca, cert, key = (local_path(getattr(access, f), base) for f in ("ca", "cert", "key"))
        etcd = EtcdClient(access.endpoints, str(ca), Pair(Path(cert), Path(key)))
        members, leader = etcd.members(timeout=5), etcd.leader(timeout=5)
    expected = len(inventory.hosts_with(HostRole.ETCD))
    if not members:
        return [Row("etcd", False, f"no member answered at {access.endpoints}",
                    "check etcd.endpoints and the client certificate (it must be signed by the members' CA)")]
    return [Row("etcd members", len(members) == expected, f"{sorted(members.values())}",
                "" if len(members) == expected else f"etcd lists {len(members)} members, the inventory {expected} etcd "
                                                    "hosts: correct the hosts' roles, or remove the stray member"),
            Row("etcd leader", leader is not None, leader or "no leader agreed on", "" if leader else "etcd has no quorum?")]


def check(inventory: Inventory, base: Path) -> list[Row]:
    hosts = ssh_hosts(inventory, base)
    try:
        return api_rows(inventory, base) + host_rows(inventory, hosts) + etcd_rows(inventory, base, hosts)
    finally:
        for ssh in hosts.values():
            ssh.close()
