"""The cluster's PKI, made with the `cryptography` library: CAs, serving and client certificates, kubeconfigs.

Layout of a PKI directory (keys and kubeconfigs mode 0600):
    ca.{crt,key}                      cluster CA (apiserver serving and client certificates)
    etcd/ca.{crt,key}                 etcd CA (etcd server, peer and client certificates)
    etcd/<host>-server.{crt,key}      etcd client-port serving certificate (SANs: host address, 127.0.0.1)
    etcd/<host>-peer.{crt,key}        etcd peer certificate (server + client auth)
    etcd/apiserver-client.{crt,key}   kube-apiserver -> etcd
    etcd/quorum-client.{crt,key}      the harness's monitors and checks -> etcd
    apiserver-<host>.{crt,key}        kube-apiserver serving (LB address, service IP, host address, DNS names)
    sa.{key,pub}                      service-account signing key pair
    admin.{crt,key}                   system:masters client (admin.kubeconfig)
    controller-manager.{crt,key}      system:kube-controller-manager
    scheduler.{crt,key}               system:kube-scheduler
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from harness.topology import Topology

# kubeadm's defaults (certificates 1 year, CAs 10 years): a fresh cluster has what a fresh kubeadm cluster has left,
# which the certificate_days_left objective (30 days) judges
VALIDITY = datetime.timedelta(days=365)
CA_VALIDITY = datetime.timedelta(days=3650)


def write_private(path: Path, data: bytes) -> None:
    """Write a secret with mode 0600 from the first byte (never world-readable, even briefly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o600)


@dataclass(frozen=True)
class Pair:
    """Paths of a certificate and its key."""

    cert: Path
    key: Path


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


class Authority:
    """A CA on disk that issues certificates next to itself."""

    def __init__(self, directory: Path, common_name: str) -> None:
        self.directory = directory
        self.pair = Pair(directory / "ca.crt", directory / "ca.key")
        if self.pair.cert.exists() and self.pair.key.exists():
            self.key = serialization.load_pem_private_key(self.pair.key.read_bytes(), None)
            self.cert = x509.load_pem_x509_certificate(self.pair.cert.read_bytes())
            return
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + CA_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        write_private(self.pair.key, _key_pem(self.key))
        self.pair.cert.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(
        self,
        stem: str,
        common_name: str,
        *,
        organization: str | None = None,
        server: bool = False,
        client: bool = False,
        dns: tuple[str, ...] = (),
        ips: tuple[ipaddress.IPv4Address, ...] = (),
        validity: datetime.timedelta = VALIDITY,
    ) -> Pair:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if server else []) + ([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organization))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False  # type: ignore[arg-type]
            )
        )
        if dns or ips:
            names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns] + [x509.IPAddress(i) for i in ips]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())  # type: ignore[arg-type]
        pair = Pair(self.directory / f"{stem}.crt", self.directory / f"{stem}.key")
        write_private(pair.key, _key_pem(key))
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return pair


API_DNS_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost")
LOOPBACK = ipaddress.IPv4Address("127.0.0.1")


class ClusterPKI:
    """Every certificate a topology needs, under one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.ca = Pair(directory / "ca.crt", directory / "ca.key")
        self.etcd_ca = Pair(directory / "etcd" / "ca.crt", directory / "etcd" / "ca.key")
        self.service_account_key = directory / "sa.key"
        self.service_account_pub = directory / "sa.pub"

    def etcd_server(self, host: str) -> Pair:
        return Pair(self.directory / "etcd" / f"{host}-server.crt", self.directory / "etcd" / f"{host}-server.key")

    def etcd_peer(self, host: str) -> Pair:
        return Pair(self.directory / "etcd" / f"{host}-peer.crt", self.directory / "etcd" / f"{host}-peer.key")

    def etcd_client(self, who: str) -> Pair:
        """who: 'apiserver-client' or 'quorum-client'."""
        return Pair(self.directory / "etcd" / f"{who}.crt", self.directory / "etcd" / f"{who}.key")

    def apiserver(self, host: str) -> Pair:
        return Pair(self.directory / f"apiserver-{host}.crt", self.directory / f"apiserver-{host}.key")

    def client(self, who: str) -> Pair:
        """who: 'admin', 'controller-manager', 'scheduler', 'kwok' or 'loadgen'."""
        return Pair(self.directory / f"{who}.crt", self.directory / f"{who}.key")

    def generate(self, topology: Topology) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(self.directory, 0o700)
        cluster_ca = Authority(self.directory, f"quorum-{topology.name}-ca")
        etcd_ca = Authority(self.directory / "etcd", f"quorum-{topology.name}-etcd-ca")
        # a spare host's certificates are issued with the others: joining it needs no CA key at hand
        for host in topology.etcd_hosts + topology.spares:
            address = topology.address_of(host)
            etcd_ca.issue(f"{host.name}-server", host.name, server=True, client=True, dns=(host.name, "localhost"),
                          ips=(address, LOOPBACK))
            etcd_ca.issue(f"{host.name}-peer", host.name, server=True, client=True, dns=(host.name,), ips=(address,))
        etcd_ca.issue("apiserver-client", "kube-apiserver-etcd-client", client=True)
        etcd_ca.issue("quorum-client", "quorum-harness", client=True)
        lb = topology.load_balancer_host
        shared_ips = [topology.apiserver.service_cidr.network_address + 1, LOOPBACK]
        if lb is not None:
            shared_ips.append(topology.address_of(lb))
        short_lived = topology.defects.short_lived_certificates
        for host in topology.controllers + topology.spares:
            days = short_lived.get(host.name)
            cluster_ca.issue(f"apiserver-{host.name}", "kube-apiserver", server=True, dns=(*API_DNS_NAMES, host.name),
                             ips=(topology.address_of(host), *shared_ips),
                             validity=VALIDITY if days is None else datetime.timedelta(days=days))
        cluster_ca.issue("admin", "kubernetes-admin", organization="system:masters", client=True)
        cluster_ca.issue("controller-manager", "system:kube-controller-manager", client=True)
        cluster_ca.issue("scheduler", "system:kube-scheduler", client=True)
        if topology.hollow_nodes.count:
            # kwok writes Nodes, Leases and Pod status for hundreds of nodes: cluster-admin, like kwokctl gives it
            cluster_ca.issue("kwok", "quorum-kwok", organization="system:masters", client=True)
        # the API load generator: its own identity, so its requests are told apart in audit and metrics
        cluster_ca.issue("loadgen", "quorum-loadgen", organization="system:masters", client=True)
        sa = ec.generate_private_key(ec.SECP256R1())
        write_private(self.service_account_key, _key_pem(sa))
        self.service_account_pub.write_bytes(
            sa.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )


def write_kubeconfig(path: Path, *, server: str, ca: Path, client: Pair, user: str, cluster: str) -> Path:
    """A self-contained kubeconfig (certificates embedded), mode 0600."""
    def encoded(file: Path) -> str:
        return base64.b64encode(file.read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": encoded(ca)}}],
        "users": [{"name": user, "user": {"client-certificate-data": encoded(client.cert), "client-key-data": encoded(client.key)}}],
        "contexts": [{"name": f"{user}@{cluster}", "context": {"cluster": cluster, "user": user}}],
        "current-context": f"{user}@{cluster}",
    }
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
    return path
