"""Conformance: the running cluster keeps the invariants the background documents promise.

Read-only (marker `conformance`, never destructive). Flags are read from each component's live command line
(Target.live_flags), reachability is tried from inside each host, files are read with pytest-testinfra inside
each host (Target.testinfra); object-level facts come from the Kubernetes API. The checks run on every target
(on kind, kubeadm's layout is judged by the same invariants; docs/scenarios.md says which it does not keep),
except those that read the files Quorum wrote (Capability.RUN_FILES). Each check names its
invariant and where it comes from: seed 000 (Typhoon multi-controller release notes), seed 001 (Typhoon
kubelet/manifest notes), seed 003 (the 1000-node design), seed 004 (the resilience plan).
"""

import math
from urllib.parse import urlparse

import pytest

from harness.components.leader_elected import LEADER_ELECTION_DEFAULTS
from harness.components.flags import go_duration_s
from harness.clients.health import session
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole
from harness.thresholds import STARTUP_ALLOWANCE_S
from harness.topology import Component
from harness.wait import until
from harness.scenario.skips import lacks

pytestmark = pytest.mark.conformance




def etcd_endpoint(cluster, member: str) -> tuple[str, int]:
    url = urlparse(cluster.etcd_url(member))
    return url.hostname, url.port


def test_etcd_members_are_exactly_the_etcd_hosts(cluster):
    """Invariant: the etcd cluster is the controllers' on-host members (or the dedicated etcd hosts), no
    more, no fewer. Source: seed 000 (on-host etcd across controllers), seed 004 (3-5 members)."""
    assert sorted(cluster.etcd.members().values()) == sorted(cluster.hosts(HostRole.ETCD))


def test_etcd_peer_and_client_listeners_use_tls(cluster):
    """Invariant: etcd peer and client URLs are https with client-certificate auth. Source: seed 000 (TLS
    peers between controllers)."""
    for host, flags in cluster.live_flags(Component.ETCD).items():
        for flag in ("--listen-peer-urls", "--initial-advertise-peer-urls", "--listen-client-urls",
                     "--advertise-client-urls"):
            assert all(url.startswith("https://") for url in flags[flag].split(",")), f"etcd@{host} {flag}={flags[flag]}"
        assert flags.get("--client-cert-auth") == "true" and flags.get("--peer-client-cert-auth") == "true", host


def test_the_etcd_client_port_is_reachable_from_every_controller(cluster):
    """Invariant: every controller reaches every member's client port (2379). Source: seed 000 (etcd client
    traffic allowed from every controller, needed by each apiserver)."""
    for controller in cluster.hosts(HostRole.CONTROLLER):
        for member in cluster.hosts(HostRole.ETCD):
            address, port = etcd_endpoint(cluster, member)
            probe = f"timeout 3 bash -c '</dev/tcp/{address}/{port}' && echo open"
            assert cluster.exec(controller, ["bash", "-c", probe], check=False).strip() == "open", \
                f"{controller} cannot reach etcd on {member}"


def test_plain_http_to_the_etcd_client_port_is_refused(cluster):
    """Invariant: no plain-text client access to etcd. Source: seed 000 (TLS everywhere)."""
    for member in cluster.hosts(HostRole.ETCD):
        address, port = etcd_endpoint(cluster, member)
        answer = cluster.exec(cluster.hosts(HostRole.CONTROLLER)[0], ["curl", "-s", "-m", "3", f"http://{address}:{port}/health"],
                              check=False)
        assert '"health"' not in answer, f"{member} answered plain HTTP: {answer[:80]}"


def test_every_apiserver_lists_every_etcd_member(cluster):
    """Invariant: each apiserver is configured with every member's client URL, so it survives the loss of
    its local member. Source: seed 000, seed 003 (etcd on every controller)."""
    wanted = set(cluster.hosts(HostRole.ETCD))
    for host, flags in cluster.live_flags(Component.APISERVER).items():
        servers = flags["--etcd-servers"].split(",")
        members = {cluster.etcd_member_named(url) for url in servers}
        assert members == wanted, (f"kube-apiserver@{host} lists {servers}: members {sorted(map(str, members))}, "
                                   f"not every member {sorted(wanted)}")


@pytest.mark.requires(Capability.RUN_FILES, Capability.LB_ADMIN)
def test_the_load_balancer_health_checks_readyz_over_tls_on_every_apiserver(cluster):
    """Invariant: the LB checks the apiserver itself (/readyz over verified TLS on the apiserver port), not
    a kubelet port, and has every apiserver as a backend. Source: seed 000 (apiservers behind an LB with
    apiserver health checks), seed 003 (HA proxy in front of apiservers with health checks)."""
    if not cluster.hosts(HostRole.LOADBALANCER):
        lacks("load-balancer", "no load balancer in this topology")
    lb = cluster.hosts(HostRole.LOADBALANCER)[0]
    config = cluster.testinfra(lb).file(cluster.config_file("haproxy", lb)).content_string
    check = cluster.topology.load_balancer.health_check
    assert f"http-check send meth GET uri {check.path}" in config and check.path == "/readyz", "no /readyz check"
    assert "check check-ssl verify required" in config, "the health check is not over verified TLS"
    assert "10250" not in config, "the LB checks a kubelet port"
    for controller in cluster.hosts(HostRole.CONTROLLER):
        assert f"server {controller} {cluster.address(controller)}:{cluster.topology.apiserver.port}" in config, \
            f"{controller} is not a backend"


@pytest.mark.parametrize("component", [Component.CONTROLLER_MANAGER, Component.SCHEDULER], ids=lambda c: c.value)
def test_leader_election_is_on_with_the_topology_timings(cluster, component):
    """Invariant: warm standbys with leader election, using the timings the topology states. Source: seed 004
    (warm-standby controller-manager/scheduler), seed 003 (timings adjusted after destructive testing)."""
    election = getattr(cluster.topology, "leader_election", None)
    if election is None:  # an inventory states no timings: the configuration checks judge the running ones
        lacks("lease-timings", f"{cluster.name} states no lease timings to compare with (test_configuration.py "
                               "judges the running ones against the objectives)")
    wanted = {"--leader-elect-lease-duration": election.lease_duration_s,
              "--leader-elect-renew-deadline": election.renew_deadline_s,
              "--leader-elect-retry-period": election.retry_period_s}
    for host, flags in cluster.live_flags(component).items():
        running = LEADER_ELECTION_DEFAULTS | flags
        assert running["--leader-elect"] == "true", f"{component.value}@{host} runs without leader election"
        for flag, seconds in wanted.items():
            assert math.isclose(go_duration_s(running[flag]), seconds, abs_tol=1e-3), f"{component.value}@{host} {flag}={running[flag]}, not {seconds}s"


def test_authorization_is_rbac_and_node(cluster):
    """Invariant: the apiservers authorize with Node and RBAC, nothing more permissive. Source: seed 001
    (Typhoon's kubelet and manifest hardening)."""
    for host, flags in cluster.live_flags(Component.APISERVER).items():
        modes = flags["--authorization-mode"].split(",")
        assert modes == ["Node", "RBAC"], f"kube-apiserver@{host} authorizes with {modes}"


def test_anonymous_requests_are_refused_except_on_health_endpoints(cluster):
    """Invariant: on every apiserver, anonymous clients get the health endpoints and nothing else. Source: seed
    001; the LB's /readyz check needs anonymous health access (seed 000). Each apiserver is asked directly once
    an admin client finds it ready: one just started refuses anonymous clients until its RBAC caches are synced
    (seen: 403 on /readyz through the LB after a heal had restarted every apiserver). A health endpoint may
    answer 500 (unhealthy, e.g. a fresh apiserver's readiness flapping on a loaded machine): that answers the
    anonymous client, which is what is judged here; only 401/403 refuse it."""
    http = session()
    for host in cluster.hosts(HostRole.CONTROLLER):
        apiserver = cluster.apiserver(host)
        ca = apiserver.session.verify
        assert until(apiserver.ready, STARTUP_ALLOWANCE_S[Component.APISERVER], 0.5).held, \
            f"kube-apiserver@{host} is not ready"
        for path in ("/readyz", "/livez", "/healthz"):
            status = http.get(apiserver.endpoint + path, verify=ca, timeout=5).status_code
            assert status not in (401, 403), f"anonymous GET {path} on {host} refused with {status}"
        for path in ("/api/v1/namespaces", "/apis", "/version", "/metrics", "/api/v1/secrets"):
            status = http.get(apiserver.endpoint + path, verify=ca, timeout=5).status_code
            assert status in (401, 403), f"anonymous GET {path} on {host} answered {status}"


@pytest.mark.requires(Capability.RUN_FILES)
def test_private_keys_and_kubeconfigs_are_mode_0600(cluster):
    """Invariant: key files and kubeconfigs are readable by their owner only. Source: seed 001 (assets
    hardening), the project's security rules."""
    host = cluster.testinfra(cluster.hosts(HostRole.CONTROLLER)[0])
    paths = cluster.secret_files()
    assert paths
    loose = [str(p) for p in paths if host.file(str(p)).mode != 0o600]
    assert not loose, f"not mode 0600: {loose}"
