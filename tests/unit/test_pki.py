import stat
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from harness.pki import ClusterPKI, write_kubeconfig
from harness.topology import load_topology

CLUSTERS = Path(__file__).resolve().parents[2] / "clusters"


@pytest.fixture(scope="module")
def ha3(tmp_path_factory):
    topology = load_topology(CLUSTERS / "ha3.yaml")
    pki = ClusterPKI(tmp_path_factory.mktemp("run") / "pki")
    pki.generate(topology)
    return topology, pki


def load(path):
    return x509.load_pem_x509_certificate(path.read_bytes())


def sans(cert):
    ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return set(ext.get_values_for_type(x509.DNSName)), {str(i) for i in ext.get_values_for_type(x509.IPAddress)}


def usages(cert):
    return set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


def test_apiserver_serving_cert_names_lb_service_ip_host_and_dns(ha3):
    topology, pki = ha3
    dns, ips = sans(load(pki.apiserver("c2").cert))
    assert {str(topology.address_of("lb")), str(topology.address_of("c2")), "10.96.0.1", "127.0.0.1"} <= ips
    assert {"kubernetes", "kubernetes.default.svc.cluster.local", "c2"} <= dns
    assert ExtendedKeyUsageOID.SERVER_AUTH in usages(load(pki.apiserver("c2").cert))


def test_etcd_certs_carry_the_member_address_and_both_usages_for_peers(ha3):
    topology, pki = ha3
    for host in topology.etcd_hosts:
        _, ips = sans(load(pki.etcd_server(host.name).cert))
        assert str(topology.address_of(host)) in ips
        peer = load(pki.etcd_peer(host.name).cert)
        assert {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH} <= usages(peer)


def test_etcd_certs_are_signed_by_the_etcd_ca_not_the_cluster_ca(ha3):
    _, pki = ha3
    etcd_ca, cluster_ca = load(pki.etcd_ca.cert), load(pki.ca.cert)
    client = load(pki.etcd_client("apiserver-client").cert)
    assert client.issuer == etcd_ca.subject != cluster_ca.subject
    client.verify_directly_issued_by(etcd_ca)


def test_admin_is_in_system_masters(ha3):
    _, pki = ha3
    subject = load(pki.client("admin").cert).subject
    assert subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"


def test_every_private_key_is_mode_0600_and_the_directory_0700(ha3):
    _, pki = ha3
    keys = list(pki.directory.rglob("*.key"))
    assert len(keys) >= 15
    for key in keys:
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    assert stat.S_IMODE(pki.directory.stat().st_mode) == 0o700


def test_kubeconfig_is_0600_and_self_contained(ha3, tmp_path):
    topology, pki = ha3
    path = write_kubeconfig(tmp_path / "admin.kubeconfig", server=topology.api_endpoint, ca=pki.ca.cert,
                            client=pki.client("admin"), user="admin", cluster="ha3")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    config = yaml.safe_load(path.read_text())
    assert config["clusters"][0]["cluster"]["server"] == topology.api_endpoint
    assert "client-key-data" in config["users"][0]["user"]


def test_regenerating_reuses_the_cas(ha3):
    topology, pki = ha3
    before = pki.ca.cert.read_bytes()
    pki.generate(topology)
    assert pki.ca.cert.read_bytes() == before
