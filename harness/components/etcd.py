"""etcd: one member per etcd host, client and peer TLS with client-certificate auth."""

from __future__ import annotations

from harness.components.base import ComponentSpec, HealthProbe, Layout
from harness.topology import Component, EtcdSettings, Host, Topology
from harness.topology.base import FixedPort

CLIENT_PORT = int(FixedPort.ETCD_CLIENT)
PEER_PORT = int(FixedPort.ETCD_PEER)


def settings_of(flags: dict[str, str]) -> EtcdSettings:
    """The timings a running member's command line gives (etcd's defaults where it leaves a flag out)."""
    defaults = EtcdSettings()
    return EtcdSettings(heartbeat_ms=int(flags.get("--heartbeat-interval", defaults.heartbeat_ms)),
                        election_timeout_ms=int(flags.get("--election-timeout", defaults.election_timeout_ms)))


def client_url(topology: Topology, host: Host) -> str:
    scheme = "https" if topology.etcd.tls else "http"
    return f"{scheme}://{topology.address_of(host)}:{CLIENT_PORT}"


def peer_url(topology: Topology, host: Host) -> str:
    scheme = "https" if topology.etcd.peer_tls else "http"
    return f"{scheme}://{topology.address_of(host)}:{PEER_PORT}"


def client_urls(topology: Topology) -> list[str]:
    return [client_url(topology, h) for h in topology.etcd_hosts]


def apiserver_urls(topology: Topology) -> list[str]:
    """The members the apiservers use: every member, except one a defect twin split off (defects.split_etcd_member),
    which holds a cluster of its own, and one a scale-down is removing (Host.retiring)."""
    return [client_url(topology, h) for h in topology.etcd_hosts
            if h.name != topology.defects.split_etcd_member and not h.retiring]


def bootstrap_members(topology: Topology, host: Host) -> tuple[list[Host], str]:
    """The members `host` bootstraps with (--initial-cluster) and the cluster's token: every etcd host; a member that
    a defect twin splits off names only itself under a token of its own, so it forms a one-member cluster."""
    if host.name == topology.defects.split_etcd_member:
        return [host], f"quorum-{topology.name}-split-{host.name}"
    return topology.etcd_hosts, f"quorum-{topology.name}"


def spec(layout: Layout, host: Host) -> ComponentSpec:
    topology, pki = layout.topology, layout.pki
    settings = topology.etcd
    local = client_url(topology, host).replace(str(topology.address_of(host)), "127.0.0.1")
    members, token = bootstrap_members(topology, host)
    argv = [
        str(layout.binary("etcd")),
        f"--name={host.name}",
        f"--data-dir={layout.data_dir(host.name) / 'etcd'}",
        f"--listen-client-urls={client_url(topology, host)},{local}",
        f"--advertise-client-urls={client_url(topology, host)}",
        f"--listen-peer-urls={peer_url(topology, host)}",
        f"--initial-advertise-peer-urls={peer_url(topology, host)}",
        "--initial-cluster=" + ",".join(f"{h.name}={peer_url(topology, h)}" for h in members),
        "--initial-cluster-state=new",
        f"--initial-cluster-token={token}",
        f"--heartbeat-interval={settings.heartbeat_ms}",
        f"--election-timeout={settings.election_timeout_ms}",
        "--logger=zap",
        "--log-outputs=stderr",
    ]
    if settings.tls:
        server = pki.etcd_server(host.name)
        argv += [f"--cert-file={server.cert}", f"--key-file={server.key}", f"--trusted-ca-file={pki.etcd_ca.cert}",
                 "--client-cert-auth=true"]
    if settings.peer_tls:
        peer = pki.etcd_peer(host.name)
        argv += [f"--peer-cert-file={peer.cert}", f"--peer-key-file={peer.key}",
                 f"--peer-trusted-ca-file={pki.etcd_ca.cert}", "--peer-client-cert-auth=true"]
    health = HealthProbe(
        kind="https" if settings.tls else "http", address=layout.address(host), port=CLIENT_PORT, path="/health",
        ca=pki.etcd_ca.cert if settings.tls else None, client=pki.etcd_client("quorum-client") if settings.tls else None,
    )
    return ComponentSpec(Component.ETCD, host.name, argv, topology.restart_policy(Component.ETCD), health)
