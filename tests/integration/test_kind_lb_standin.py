"""kind's load balancer stand-in (harness/backends/kind/lb_standin.py) for real: the image built from the node base
image, started with kind's own bootstrap command, configured the way kind configures Envoy (xDS files
replaced by mv), in front of three real apiservers (ha3 on the docker backend)."""

import http.client
import ssl
import time
import uuid

import pytest

from harness.backends.docker import hosts as docker_backend
from harness.backends.docker.engine import ensure_engine
from harness.faults import Nemesis, Stop
from harness.history import History
from harness.backends.kind.images import LB_IMAGE, build_lb_standin
from harness.backends.kind.load_balancer import configured_cds, configured_lds
from harness.backends.kind.topology import KindLoadBalancer
from tests.integration.conftest import CLUSTERS, in_docker_lane, running

# kind v0.33's GenerateBootstrapCommand (pkg/cluster/internal/loadbalancer/config.go), bootstrap file abridged
BOOTSTRAP = ("mkdir -p /home/envoy && echo -en 'admin: {}' > /home/envoy/envoy.yaml"
             " && { [ ! -f /home/envoy/cds.yaml ] && echo -en 'resources: []' > /home/envoy/cds.yaml || true; }"
             " && { [ ! -f /home/envoy/lds.yaml ] && echo -en 'resources: []' > /home/envoy/lds.yaml || true; }"
             " && while true; do envoy -c /home/envoy/envoy.yaml && break; sleep 1; done")
LDS = """resources:
- name: listener_apiserver
  address:
    socket_address:
      address: "0.0.0.0"
      port_value: 6443
"""

# the listener as kind renders it, with its TCP proxy (where the connect attempts are set)
LDS_PROXY = LDS + """  filter_chains:
  - filters:
    - name: envoy.filters.network.tcp_proxy
      typed_config:
        stat_prefix: ingress_tcp
        cluster: kube_apiservers
"""
# the stand-in's HAProxy statistics, read inside its container through the stats socket (level user)
SHOW_STAT = ("import socket; s = socket.socket(socket.AF_UNIX); s.connect('/home/envoy/haproxy.sock'); "
             "s.sendall(b'show stat\\n'); print(s.makefile().read())")


def cds(hosts: list[str]) -> str:
    endpoints = "".join(f"""      - endpoint:
          address:
            socket_address:
              address: {host}
              port_value: 6443
""" for host in hosts)
    # kind's health check (ProxyCDSConfigTemplate): without it the stand-in, like Envoy, balances blindly
    checks = ("  health_checks:\n  - timeout: 3s\n    interval: 2s\n    unhealthy_threshold: 2\n"
              "    healthy_threshold: 1\n    http_health_check:\n      path: /healthz\n")
    return (f"resources:\n- name: kube_apiservers\n{checks}"
            f"  load_assignment:\n    endpoints:\n    - lb_endpoints:\n{endpoints}")


@pytest.fixture(scope="module")
def ha3_docker(tmp_path_factory):
    base = tmp_path_factory.mktemp("ha3-kind-lb")
    with running(in_docker_lane(CLUSTERS / "ha3.yaml", base), base / "run", backend="docker") as cluster:
        yield cluster


@pytest.fixture
def standin(ha3_docker):
    engine = ensure_engine()
    build_lb_standin(engine)
    docker = engine.client
    container = docker.run(LB_IMAGE, ["bash", "-c", BOOTSTRAP], detach=True, name=f"quorum-lbtest-{uuid.uuid4().hex[:6]}",
                           networks=[docker_backend.network_name(ha3_docker.run_id)])
    try:
        yield container
    finally:
        docker.container.remove(container.name, force=True, volumes=True)


def configure(container, docker, lds: str, cds_text: str) -> None:
    """As kind does it: write .tmp files, then mv them over the live ones."""
    for name, text in (("lds", lds), ("cds", cds_text)):
        docker.container.execute(container.name, ["sh", "-c", f"cat > /home/envoy/{name}.yaml.tmp << 'EOF'\n{text}EOF"])
    docker.container.execute(container.name, ["sh", "-c", "mv /home/envoy/cds.yaml.tmp /home/envoy/cds.yaml"
                                              " && mv /home/envoy/lds.yaml.tmp /home/envoy/lds.yaml"])


def readyz_through(address: str, ca: str) -> int:
    """GET /readyz on a fresh connection; the apiserver's certificate chain is verified (not its name: the
    stand-in's address is not in it)."""
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = False
    connection = http.client.HTTPSConnection(address, 6443, context=context, timeout=3)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status
    except OSError:
        return 0
    finally:
        connection.close()


def wait_for(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def test_the_standin_balances_kinds_apiservers_routes_around_a_stopped_one_and_follows_new_config(ha3_docker, standin):
    docker = ensure_engine().client
    names = [docker_backend.container_name(ha3_docker.run_id, h) for h in ("c1", "c2", "c3")]
    address = docker.container.inspect(standin.name).network_settings.networks[
        docker_backend.network_name(ha3_docker.run_id)].ip_address
    ca = str(ha3_docker.layout.pki.ca.cert)
    configure(standin, docker, LDS, cds(names))
    wait_for(lambda: readyz_through(address, ca) == 200, 30, "the stand-in to serve /readyz")
    config = docker.container.execute(standin.name, ["cat", "/home/envoy/haproxy.cfg"])
    assert all(f"{name}:6443" in config for name in names), config

    with Nemesis(ha3_docker, History()).fault(Stop(component="kube-apiserver@c1")):
        time.sleep(2 * 2 + 3 + 1)  # kind's health check: 2 failures 2 s apart, 3 s timeout
        statuses = [readyz_through(address, ca) for _ in range(12)]
        assert statuses == [200] * 12, f"requests reached the stopped apiserver: {statuses}"

    configure(standin, docker, LDS, cds(names[1:]))  # kind rewrites cds.yaml when control planes change
    wait_for(lambda: names[0] not in docker.container.execute(standin.name, ["cat", "/home/envoy/haproxy.cfg"]),
             10, "the stand-in to apply the new backends")
    wait_for(lambda: readyz_through(address, ca) == 200, 10, "the reloaded stand-in to serve")


def servers_up(container, docker) -> int:
    rows = docker.container.execute(container.name, ["python3", "-c", SHOW_STAT]).splitlines()
    return sum(1 for row in rows if row.startswith("kube_apiservers,apiserver") and row.split(",")[17].startswith("UP"))


@pytest.mark.parametrize("attempts", [3, 1], ids=["quorums-reference", "kinds-own"])
def test_a_refused_connection_is_tried_on_the_next_apiserver_only_with_more_than_one_connect_attempt(
        ha3_docker, standin, attempts):
    """Right after an apiserver is killed, before two failed checks 2 s apart can mark it down, a third of the new
    connections are sent to its closed port: with three connect attempts (Quorum's reference kind topology) each is
    tried on the next apiserver and served; with one (kind's Envoy default) it fails."""
    docker = ensure_engine().client
    names = [docker_backend.container_name(ha3_docker.run_id, h) for h in ("c1", "c2", "c3")]
    address = docker.container.inspect(standin.name).network_settings.networks[
        docker_backend.network_name(ha3_docker.run_id)].ip_address
    ca = str(ha3_docker.layout.pki.ca.cert)
    wait_for(lambda: ha3_docker.health.component_healthy("kube-apiserver", "c1"), 60, "kube-apiserver@c1 ready")
    settings = KindLoadBalancer(connect_attempts=attempts)
    configure(standin, docker, configured_lds(LDS_PROXY, settings), configured_cds(cds(names), settings))
    applied = ["sh", "-c", "cat /home/envoy/haproxy.cfg 2>/dev/null || true"]  # written once kind's files are read
    wait_for(lambda: f"retries {attempts - 1}\n" in docker.container.execute(standin.name, applied), 10,
             "the stand-in to apply the connect attempts")
    wait_for(lambda: servers_up(standin, docker) == 3, 30, "every apiserver UP in the stand-in")

    with Nemesis(ha3_docker, History()).fault(Stop(component="kube-apiserver@c1", signal="SIGKILL")):
        statuses = [readyz_through(address, ca) for _ in range(9)]
        still_up = servers_up(standin, docker)
    assert still_up == 3, "the checks marked c1 down before the requests ended: nothing was sent to its closed port"
    if attempts > 1:
        assert statuses == [200] * 9, f"a connection refused by c1 was not tried on the next apiserver: {statuses}"
    else:
        assert 0 in statuses and statuses.count(200) >= 5, f"with one attempt, c1's share should fail: {statuses}"
