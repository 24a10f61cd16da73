"""Conformance: the running cluster keeps the invariants the background documents promise.

Read-only (marker `conformance`, never destructive). Host-level facts come from pytest-testinfra inside
each Quorum host (harness/hostinfra.py); object-level facts from the Kubernetes API. Each check names its
invariant and where it comes from: seed 000 (Typhoon multi-controller release notes), seed 001 (Typhoon
kubelet/manifest notes), seed 003 (the 1000-node design), seed 004 (the resilience plan).
"""

import time

import pytest

from harness.components import etcd as etcd_component
from harness.health import session
from harness.hostinfra import testinfra_host
from harness.thresholds import STARTUP_ALLOWANCE_S
from harness.topology import Component

pytestmark = pytest.mark.conformance


def args_of(cluster, component_id) -> dict[str, str]:
    """A running component's flags, read from /proc inside its host (the live command line, not the spec)."""
    spec = cluster.specs[component_id]
    pid = cluster.pid(component_id)
    assert pid is not None, f"{component_id} is not running"
    raw = testinfra_host(cluster, spec.host).file(f"/proc/{pid}/cmdline").content
    flags = {}
    for arg in raw.split(b"\0")[1:]:
        name, _, value = arg.decode().partition("=")
        if name.startswith("--"):
            flags[name] = value  # the last occurrence wins, as in the component's own flag parser
    return flags


def of(cluster, component):
    return [cid for cid, spec in cluster.specs.items() if spec.component is component]


def test_etcd_members_are_exactly_the_etcd_hosts(cluster):
    """Invariant: the etcd cluster is the controllers' on-host members (or the dedicated etcd hosts), no
    more, no fewer. Source: seed 000 (on-host etcd across controllers), seed 004 (3-5 members)."""
    members = sorted(cluster.etcd.members().values())
    assert members == sorted(h.name for h in cluster.topology.etcd_hosts)


def test_etcd_peer_and_client_listeners_use_tls(cluster):
    """Invariant: etcd peer and client URLs are https with client-certificate auth. Source: seed 000 (TLS
    peers between controllers)."""
    for cid in of(cluster, Component.ETCD):
        flags = args_of(cluster, cid)
        for flag in ("--listen-peer-urls", "--initial-advertise-peer-urls", "--listen-client-urls",
                     "--advertise-client-urls"):
            assert all(url.startswith("https://") for url in flags[flag].split(",")), f"{cid} {flag}={flags[flag]}"
        assert flags.get("--client-cert-auth") == "true" and flags.get("--peer-client-cert-auth") == "true", cid


def test_the_etcd_client_port_is_reachable_from_every_controller(cluster):
    """Invariant: every controller reaches every member's client port (2379). Source: seed 000 (etcd client
    traffic allowed from every controller, needed by each apiserver)."""
    for controller in cluster.topology.controllers:
        host = testinfra_host(cluster, controller.name)
        for member in cluster.topology.etcd_hosts:
            address = cluster.topology.address_of(member)
            probe = host.run(f"timeout 3 bash -c '</dev/tcp/{address}/{etcd_component.CLIENT_PORT}'")
            assert probe.rc == 0, f"{controller.name} cannot reach etcd on {member.name}"


def test_plain_http_to_the_etcd_client_port_is_refused(cluster):
    """Invariant: no plain-text client access to etcd. Source: seed 000 (TLS everywhere)."""
    host = testinfra_host(cluster, cluster.topology.controllers[0].name)
    for member in cluster.topology.etcd_hosts:
        url = f"http://{cluster.topology.address_of(member)}:{etcd_component.CLIENT_PORT}/health"
        answer = host.run(f"curl -s -m 3 {url}")
        assert '"health"' not in answer.stdout, f"{member.name} answered plain HTTP: {answer.stdout[:80]}"


def test_every_apiserver_lists_every_etcd_member(cluster):
    """Invariant: each apiserver is configured with every member's client URL, so it survives the loss of
    its local member. Source: seed 000, seed 003 (etcd on every controller)."""
    wanted = set(cluster.etcd_urls)
    for cid in of(cluster, Component.APISERVER):
        servers = set(args_of(cluster, cid)["--etcd-servers"].split(","))
        assert servers == wanted, f"{cid} lists {sorted(servers)}, not every member {sorted(wanted)}"


def test_the_load_balancer_health_checks_readyz_over_tls_on_every_apiserver(cluster):
    """Invariant: the LB checks the apiserver itself (/readyz over verified TLS on the apiserver port), not
    a kubelet port, and has every apiserver as a backend. Source: seed 000 (apiservers behind an LB with
    apiserver health checks), seed 003 (HA proxy in front of apiservers with health checks)."""
    lb = cluster.topology.load_balancer_host
    if lb is None:
        pytest.skip("no load balancer in this topology")
    config = testinfra_host(cluster, lb.name).file(str(cluster.layout.config_dir(lb.name) / "haproxy.cfg")).content_string
    check = cluster.topology.load_balancer.health_check
    assert f"http-check send meth GET uri {check.path}" in config and check.path == "/readyz", "no /readyz check"
    assert "check check-ssl verify required" in config, "the health check is not over verified TLS"
    assert "10250" not in config, "the LB checks a kubelet port"
    for controller in cluster.topology.controllers:
        assert f"server {controller.name} {cluster.topology.address_of(controller)}:{cluster.topology.apiserver.port}" \
            in config, f"{controller.name} is not a backend"


@pytest.mark.parametrize("component", [Component.CONTROLLER_MANAGER, Component.SCHEDULER], ids=lambda c: c.value)
def test_leader_election_is_on_with_the_topology_timings(cluster, component):
    """Invariant: warm standbys with leader election, using the timings the topology states. Source: seed 004
    (warm-standby controller-manager/scheduler), seed 003 (timings adjusted after destructive testing)."""
    election = cluster.topology.leader_election
    for cid in of(cluster, component):
        flags = args_of(cluster, cid)
        assert flags.get("--leader-elect") == "true", f"{cid} runs without leader election"
        assert flags["--leader-elect-lease-duration"] == f"{int(election.lease_duration_s * 1000)}ms"
        assert flags["--leader-elect-renew-deadline"] == f"{int(election.renew_deadline_s * 1000)}ms"
        assert flags["--leader-elect-retry-period"] == f"{int(election.retry_period_s * 1000)}ms"


def test_authorization_is_rbac_and_node(cluster):
    """Invariant: the apiservers authorize with Node and RBAC, nothing more permissive. Source: seed 001
    (Typhoon's kubelet and manifest hardening)."""
    for cid in of(cluster, Component.APISERVER):
        modes = args_of(cluster, cid)["--authorization-mode"].split(",")
        assert modes == ["Node", "RBAC"], f"{cid} authorizes with {modes}"


def test_anonymous_requests_are_refused_except_on_health_endpoints(cluster):
    """Invariant: on every apiserver, anonymous clients get the health endpoints and nothing else. Source: seed
    001; the LB's /readyz check needs anonymous health access (seed 000). Each apiserver is asked directly once
    an admin client finds it ready: one just started refuses anonymous clients until its RBAC caches are synced
    (seen: 403 on /readyz through the LB after a heal had restarted every apiserver). A health endpoint may
    answer 500 (unhealthy, e.g. a fresh apiserver's readiness flapping on a loaded machine): that answers the
    anonymous client, which is what is judged here; only 401/403 refuse it."""
    http = session()
    ca = str(cluster.layout.pki.ca.cert)
    for host in (h.name for h in cluster.topology.controllers):
        apiserver = cluster.apiserver(host)
        deadline = time.monotonic() + STARTUP_ALLOWANCE_S[Component.APISERVER]
        while not apiserver.ready() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert apiserver.ready(), f"kube-apiserver@{host} is not ready"
        for path in ("/readyz", "/livez", "/healthz"):
            status = http.get(apiserver.endpoint + path, verify=ca, timeout=5).status_code
            assert status not in (401, 403), f"anonymous GET {path} on {host} refused with {status}"
        for path in ("/api/v1/namespaces", "/apis", "/version", "/metrics", "/api/v1/secrets"):
            status = http.get(apiserver.endpoint + path, verify=ca, timeout=5).status_code
            assert status in (401, 403), f"anonymous GET {path} on {host} answered {status}"


def test_private_keys_and_kubeconfigs_are_mode_0600(cluster):
    """Invariant: key files and kubeconfigs are readable by their owner only. Source: seed 001 (assets
    hardening), the project's security rules."""
    host = testinfra_host(cluster, cluster.topology.controllers[0].name)
    paths = [*cluster.run_dir.joinpath("pki").rglob("*.key"), *cluster.run_dir.rglob("*.kubeconfig")]
    assert paths
    loose = [str(p) for p in paths if host.file(str(p)).mode != 0o600]
    assert not loose, f"not mode 0600: {loose}"
