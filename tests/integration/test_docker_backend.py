"""The docker backend on a real engine: ha3 in privileged containers built from the local base image,
the node faults, and a teardown that leaves nothing behind."""

import ipaddress
import time

import pytest

from harness.backends import registry
from harness.backends.docker import hosts as docker_backend
from harness.backends.docker.engine import RUNTIME_NAME, client, ensure_engine, missing_capabilities
from harness.faults import Nemesis, NodeDisconnect, NodeKill, NodePause, NodeRestart, PacketLoss
from harness.history import History
from harness.shell import run
from harness.thresholds import lb_detection_s
from harness.wait import eventually
from tests.integration.conftest import CLUSTERS, in_docker_lane, running


@pytest.fixture(scope="module")
def ha3_docker(tmp_path_factory):
    base = tmp_path_factory.mktemp("ha3-docker")
    with running(in_docker_lane(CLUSTERS / "ha3.yaml", base), base / "run", backend="docker") as cluster:
        yield cluster


def test_the_engine_runs_privileged_containers_through_the_wrapper_where_the_host_lacks_capabilities():
    engine = ensure_engine()
    assert (engine.runtime == RUNTIME_NAME) == bool(missing_capabilities()), (engine.runtime, missing_capabilities())


def test_components_run_inside_their_host_container_which_cannot_route_off_the_machine(ha3_docker):
    docker = client()
    for spec in ha3_docker.specs.values():
        container = docker.container.inspect(docker_backend.container_name(ha3_docker.run_id, spec.host))
        pid = ha3_docker.pid(spec.component, spec.host)
        assert pid is not None, spec.id
        assert container.id in open(f"/proc/{pid}/cgroup").read(), f"{spec.id} is not in {spec.host}'s container"
    for host in ha3_docker.topology.hosts:
        routes = ha3_docker.exec(host.name, ["ip", "-4", "route"])
        assert "default" not in routes, routes
        assert run(["ip", "netns", "exec", ha3_docker.netns(host.name), "ip", "route", "get", "192.0.2.1"], check=False) == ""
    assert any(ha3_docker.run_id in rule and "DROP" in rule for rule in run(["iptables", "-S", "FORWARD"]).splitlines())


def test_a_killed_node_takes_its_components_and_heal_brings_it_back(ha3_docker):
    history = History()
    with Nemesis(ha3_docker, history).fault(NodeKill(host="c2")):
        time.sleep(1)
        assert not client().container.inspect(docker_backend.container_name(ha3_docker.run_id, "c2")).state.running
        assert ha3_docker.pid("etcd", "c2") is None
        # a kept-alive connection through the LB may be bound to c2, and a new one sent there, until the LB's checks
        # take c2 out: the API must answer a new connection within that bound
        bound = lb_detection_s(ha3_docker.topology)
        assert eventually(lambda: ha3_docker.api.on_a_new_connection().ready(), bound), \
            f"two controllers of three keep the API up: no answer through the LB within {bound:.1f} s of the kill"
    assert ha3_docker.health.problems_after(ha3_docker.settle_s) == []


def test_a_paused_node_is_silent_until_healed(ha3_docker):
    history = History()
    pid = ha3_docker.pid("kube-apiserver", "c3")
    with Nemesis(ha3_docker, history).fault(NodePause(host="c3")):
        assert client().container.inspect(docker_backend.container_name(ha3_docker.run_id, "c3")).state.paused
        assert not ha3_docker.apiserver("c3").ready(timeout=1.0)
    assert ha3_docker.health.problems_after(ha3_docker.settle_s) == []
    assert ha3_docker.pid("kube-apiserver", "c3") == pid, "a pause does not restart anything"


def test_a_restarted_node_starts_its_components_again_by_itself(ha3_docker):
    before = ha3_docker.pid("etcd", "c1")
    with Nemesis(ha3_docker, History()).fault(NodeRestart(hosts=["c1"])):
        pass  # the restart is the whole fault; heal only checks the node is up and attached
    assert ha3_docker.health.problems_after(ha3_docker.settle_s) == []
    assert ha3_docker.pid("etcd", "c1") not in (None, before)


def test_a_disconnected_node_is_unreachable_and_reconnected_on_heal(ha3_docker):
    address = str(ha3_docker.topology.address_of("c3"))
    with Nemesis(ha3_docker, History()).fault(NodeDisconnect(host="c3")):
        assert "0 received" in ha3_docker.exec("c2", ["ping", "-c", "2", "-W", "1", address], check=False)
    assert " 0% packet loss" in ha3_docker.exec("c2", ["ping", "-c", "2", "-W", "1", address], check=False)
    # Docker names the new interface eth1: network faults must follow the host's link, not assume eth0
    link = ha3_docker.link("c3")
    assert address in ha3_docker.exec("c3", ["ip", "-4", "-o", "addr", "show", "dev", link])
    with Nemesis(ha3_docker, History()).fault(PacketLoss(host="c3", probability=1.0)):
        assert "0 received" in ha3_docker.exec("c2", ["ping", "-c", "2", "-W", "1", address], check=False)
    with Nemesis(ha3_docker, History()).fault(NodeDisconnect(host="c3")):  # Docker can disconnect it again
        assert "0 received" in ha3_docker.exec("c2", ["ping", "-c", "1", "-W", "1", address], check=False)
    assert ha3_docker.health.problems_after(ha3_docker.settle_s) == []


def test_down_leaves_no_container_network_namespace_or_rule(tmp_path):
    run_dir = tmp_path / "run"
    cluster = registry.get("docker").up(in_docker_lane(CLUSTERS / "single.yaml", tmp_path), run_dir)
    run_id = cluster.run_id
    registry.down(run_dir)
    docker = client()
    assert not [c for c in docker.container.list(all=True) if run_id in c.name]
    assert not [n for n in docker.network.list() if run_id in n.name]
    assert run_id not in run(["ip", "netns", "list"])
    assert run_id not in run(["iptables", "-S"])


def test_status_names_the_backend_and_every_component(ha3_docker):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "harness.cli", "status", str(ha3_docker.run_dir)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "docker backend" in out.stdout
    assert out.stdout.count(" ok ") >= len(ha3_docker.specs), out.stdout
    assert "etcd leader: c" in out.stdout
    # HAProxy runs inside the lb container; its admin socket is read through the bind-mounted run dir
    assert "load balancer: c1 UP, c2 UP, c3 UP" in out.stdout


def test_a_network_the_engine_restored_for_a_run_this_machine_no_longer_knows_gives_its_subnet_back():
    """Docker keeps its networks across a reboot, the registry of runs does not: a killed run's network, with a
    node container still attached, comes back with the engine and holds its subnet. A run claiming that subnet
    removes both (a live run's are never touched: tests/integration/test_process_backend.py)."""
    from harness.backends import orphans
    from harness.backends.docker import base_image
    from harness.net import netns

    engine = ensure_engine()
    image, _ = base_image.build(engine)
    run_id, subnet = "0rphd1", "10.213.197.0/24"  # outside the spare /24s (140-189)
    docker = client()
    docker.network.create(docker_backend.network_name(run_id), driver="bridge", subnet=subnet, gateway="10.213.197.1",
                          labels={docker_backend.LABEL: run_id},
                          options=[f"com.docker.network.bridge.name={docker_backend.bridge_name(run_id)}"])
    docker.container.create(image, name=docker_backend.container_name(run_id, "c1"), labels={docker_backend.LABEL: run_id},
                            networks=[docker_backend.network_name(run_id)])
    try:
        assert netns.overlapping_routes(ipaddress.ip_network(subnet)), "the stand-in leftover holds no subnet"
        with netns.claim_subnet(ipaddress.ip_network(subnet), reclaim=orphans.reclaim):
            pass
        assert not docker.container.exists(docker_backend.container_name(run_id, "c1"))
        assert not docker_backend.network_exists(docker_backend.network_name(run_id))
        assert not netns.link_exists(docker_backend.bridge_name(run_id))
    finally:
        docker_backend.remove_run(run_id)
        netns.remove_guard_route_if_unused()


def test_the_target_protocol_holds_on_docker(ha3_docker):
    from tests.protocol_checks import check_target

    check_target(ha3_docker)
