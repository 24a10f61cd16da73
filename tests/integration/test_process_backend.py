"""Real clusters in network namespaces: brought up, checked from outside, torn down without a trace."""

import errno
import ipaddress
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from harness.backends import orphans, registry
from harness.errors import ClusterError, TopologyError
from harness.net import netns
from harness.shell import run
from harness.run.state import RunState, register, unregister
from tests.integration.conftest import CLUSTERS, running
from tests.integration.leftovers import quorum_leftovers


def etcdctl(cluster, url, *args, **kwargs):
    pki = cluster.layout.pki
    client = pki.etcd_client("quorum-client")
    return subprocess.run(
        [str(cluster.layout.binary("etcdctl")), f"--endpoints={url}", f"--cacert={pki.etcd_ca.cert}",
         f"--cert={client.cert}", f"--key={client.key}", "--command-timeout=3s", *args],
        capture_output=True, text=True, timeout=20, **kwargs)


def assert_usable(cluster):
    assert cluster.api.ready(), "/readyz through the load balancer"
    assert cluster.kubectl("get", "--raw", "/readyz").strip() == "ok"
    for url in cluster.etcd_urls:
        result = etcdctl(cluster, url, "endpoint", "health")
        assert result.returncode == 0 and "is healthy" in result.stderr + result.stdout, result.stderr
    holders = cluster.health.lease_holders()
    controllers = {h.name for h in cluster.topology.controllers}
    assert holders["kube-controller-manager"] in controllers
    assert holders["kube-scheduler"] in controllers


def test_single_controller_comes_up_and_goes_away_without_a_trace(tmp_path):
    with running(CLUSTERS / "single.yaml", tmp_path / "run") as cluster:
        run_id = cluster.run_id
        assert_usable(cluster)
        assert quorum_leftovers(run_id)  # sanity: the check below can see a live run
    assert quorum_leftovers(run_id) == []
    assert not (tmp_path / "run" / "state.json").exists()
    assert not (tmp_path / "run" / "pki").exists()


def test_ha3_is_usable_through_the_load_balancer(ha3):
    assert_usable(ha3)
    assert len(ha3.etcd_urls) == 3
    assert all(ha3.health.component_health().values())


def test_etcd_refuses_plain_http_on_the_client_port(ha3):
    url = ha3.etcd_urls[0].replace("https://", "http://")
    result = subprocess.run(["curl", "-s", "-m", "3", f"{url}/health"], capture_output=True, text=True)
    assert result.returncode != 0 and '"health"' not in result.stdout
    assert etcdctl(ha3, url, "endpoint", "health").returncode != 0


def test_anonymous_requests_get_health_but_nothing_else(ha3):
    session = __import__("harness.clients.health", fromlist=["session"]).session()
    ca = str(ha3.layout.pki.ca.cert)
    assert session.get(f"{ha3.api_endpoint}/readyz", verify=ca, timeout=5).status_code == 200
    assert session.get(f"{ha3.api_endpoint}/api/v1/namespaces", verify=ca, timeout=5).status_code == 401


def test_keys_and_kubeconfigs_are_private(ha3):
    for path in [*ha3.run_dir.joinpath("pki").rglob("*.key"), *ha3.run_dir.rglob("*.kubeconfig")]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_each_host_has_no_route_off_its_subnet(ha3):
    for host in ha3.topology.hosts:
        routes = ha3.exec(host.name, ["ip", "-4", "route"])
        assert "default" not in routes
        assert routes.strip().splitlines() == [line for line in routes.strip().splitlines() if str(ha3.topology.network.subnet) in line]


def test_supervisor_records_starts_and_names_hosts_in_lease_identities(ha3):
    starts = {e["component"] for e in ha3.events() if e["event"] == "start"}
    assert starts == set(ha3.specs)
    identity = ha3.api.lease_holder("kube-scheduler").identity
    assert identity.split("_")[0] in {h.name for h in ha3.topology.controllers}


def test_a_second_cluster_on_the_same_subnet_is_refused_and_leaves_nothing(ha3, tmp_path):
    with pytest.raises(ClusterError, match="already in use"):
        registry.get("process").up(CLUSTERS / "ha3.yaml", tmp_path / "second")
    assert not (tmp_path / "second" / "state.json").exists()
    assert ha3.api.ready()


def _broken(tmp_path, flags: str) -> Path:
    topology = tmp_path / "broken.yaml"
    topology.write_text((CLUSTERS / "single.yaml").read_text().replace("subnet: 10.213.1.0/24", "subnet: 10.213.9.0/24")
                        + f"apiserver:\n  extra_flags: {flags}\nrestart:\n  kube-apiserver: {{policy: never}}\n")
    return topology


def test_a_component_that_exits_during_start_up_fails_up_with_its_log_lines(tmp_path):
    # a flag the binary takes, with a value it refuses: only starting it finds out
    topology = _broken(tmp_path, "{--max-requests-inflight: 'many'}")
    said = []
    with pytest.raises(ClusterError) as info:
        registry.get("process").up(topology, tmp_path / "run", say=said.append, timeout_s=60)
    assert "kube-apiserver@c1 exited during start-up" in info.value.problem
    assert 'invalid argument "many" for "--max-requests-inflight"' in info.value.problem
    run_id = said[0].split()[1].rstrip(":")  # "run <id>: PKI"
    assert quorum_leftovers(run_id) == []  # torn down: nothing of the failed run remains
    assert not run(["pgrep", "-f", f"qrm-{run_id}"], check=False).strip()
    assert not (tmp_path / "run" / "state.json").exists()


def test_a_flag_the_built_binary_does_not_take_is_refused_before_anything_starts(tmp_path):
    said = []
    with pytest.raises(TopologyError) as info:
        registry.get("process").up(_broken(tmp_path, "{--no-such-flag: 'x'}"), tmp_path / "run", say=said.append,
                                   timeout_s=60)
    assert "kube-apiserver" in info.value.problem and "--no-such-flag" in info.value.problem
    assert said == [] and not (tmp_path / "run").exists()


def test_with_the_bridge_gone_traffic_to_a_host_fails_locally_at_once(tmp_path):
    with running(CLUSTERS / "single.yaml", tmp_path / "run") as cluster:
        address = str(cluster.topology.address_of("c1"))
        run(["ip", "link", "del", cluster.state.bridge])
        kernel = subprocess.run(["ip", "route", "get", address], capture_output=True, text=True)
        assert kernel.returncode != 0 and "No route to host" in kernel.stderr
        with pytest.raises(OSError) as info:
            socket.create_connection((address, 6443), timeout=5)
        # refused by the guard route on this machine, not a timeout waiting on some other host
        assert info.value.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH)
        with pytest.raises(ClusterError, match="refusing to send traffic"):
            cluster.ensure_local()


@pytest.mark.alone  # quorum down --all would tear down the other lane's clusters
def test_down_all_removes_a_crashed_run(tmp_path):
    cluster = registry.get("process").up(CLUSTERS / "single.yaml", tmp_path / "run")
    run_id = cluster.run_id
    for cid in cluster.specs:  # the harness dies hard: keepers gone, components orphaned, state lost
        run(["kill", "-9", str(cluster.keeper_pid(cid))])
    run(["rm", "-rf", str(tmp_path / "run")])
    assert quorum_leftovers(run_id)
    registry.down_all()
    deadline = time.monotonic() + 10
    while quorum_leftovers(run_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert quorum_leftovers(run_id) == []
    assert run(["pgrep", "-f", f"qrm-{run_id}"], check=False).strip() == ""


def test_the_guard_route_stays_while_another_run_claims_its_subnet():
    """A run's teardown removes the guard route when it sees no Quorum bridge. Another run adds the guard, then
    creates its bridge: without the machine-wide lock the teardown could remove the guard in between, and that
    run would go on without it. Here the claim holds its block open; the teardown's check must wait for it."""
    subnet, bridge = ipaddress.ip_network("10.213.199.0/24"), "qb-locktest"  # outside the spare /24s (140-189)
    claimed, checked = threading.Event(), threading.Event()

    def claim():
        with netns.claim_subnet(subnet):
            claimed.set()
            checked.wait(timeout=2)  # the other side's check runs now if nothing stops it
            run(["ip", "link", "add", bridge, "type", "bridge"])

    claimer = threading.Thread(target=claim)
    claimer.start()
    try:
        assert claimed.wait(timeout=10)
        teardown = threading.Thread(target=lambda: (netns.remove_guard_route_if_unused(), checked.set()))
        teardown.start()
        teardown.join(timeout=30)
        claimer.join(timeout=30)
        assert checked.is_set() and not claimer.is_alive()
        assert netns.guard_route_present(), "the guard was removed while a run was creating its bridge"
    finally:
        checked.set()
        claimer.join(timeout=30)
        run(["ip", "link", "del", bridge], check=False)
        netns.remove_guard_route_if_unused()
    with netns.network_lock():  # what the lock guarantees, whatever other runs do meanwhile: a bridge has its guard
        assert not netns.quorum_bridges() or netns.guard_route_present()


def test_a_bridge_left_by_a_run_this_machine_no_longer_knows_gives_its_subnet_back():
    """After a reboot the registry is empty, yet a killed run's bridge (kept by Docker, which restores its networks)
    may still hold the subnet; a registered run's bridge, starting or running, is never taken for a leftover."""
    subnet = ipaddress.ip_network("10.213.198.0/24")  # outside the spare /24s (140-189)
    registered = RunState(run_id="0rphb2", name="orphan-test", run_dir="/nonexistent")
    for host, run_id in enumerate(("0rphb1", registered.run_id), start=1):
        bridge = netns.bridge_name(run_id)
        run(["ip", "link", "add", bridge, "type", "bridge"])
        run(["ip", "addr", "add", f"10.213.198.{host}/24", "dev", bridge])
    register(registered)
    try:
        with pytest.raises(ClusterError, match="qb-0rphb2"):  # the registered run's bridge stays where it is
            with netns.claim_subnet(subnet, reclaim=orphans.reclaim):
                pass
        assert not netns.link_exists("qb-0rphb1"), "the unregistered run's bridge was not reclaimed"
        assert netns.link_exists("qb-0rphb2")
    finally:
        unregister(registered.run_id)
        for run_id in ("0rphb1", registered.run_id):
            run(["ip", "link", "del", netns.bridge_name(run_id)], check=False)
        netns.remove_guard_route_if_unused()
