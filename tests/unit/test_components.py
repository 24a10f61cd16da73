from pathlib import Path

import pytest

from harness.components import Layout, specs_for
from harness.errors import ClusterError
from harness.components.flags import go_duration_s, parse_flags
from harness.topology import Component, load_topology, parse_topology

CLUSTERS = Path(__file__).resolve().parents[2] / "clusters"


def layout(name="ha3.yaml", topology=None):
    topology = topology or load_topology(CLUSTERS / name)
    return Layout(topology, Path("/run-dir"), lambda binary: Path("/bin") / binary)


def flags(spec) -> dict[str, str]:
    return dict(arg.split("=", 1) for arg in spec.argv[1:] if arg.startswith("--") and "=" in arg)


def by_id(lay):
    return {s.id: s for s in specs_for(lay)}


def test_every_component_of_ha3_in_start_order():
    ids = [s.id for s in specs_for(layout())]
    # kwok last: it plays the hollow nodes through the API, through the load balancer
    assert ids[:3] == ["etcd@c1", "etcd@c2", "etcd@c3"] and ids[-2:] == ["haproxy@lb", "kwok@n1"]
    assert len(ids) == 14


def test_etcd_member_flags_tls_and_initial_cluster():
    f = flags(by_id(layout())["etcd@c2"])
    assert f["--name"] == "c2"
    assert f["--listen-client-urls"] == "https://10.213.3.12:2379,https://127.0.0.1:2379"
    assert f["--initial-cluster"] == ("c1=https://10.213.3.11:2380,c2=https://10.213.3.12:2380,"
                                      "c3=https://10.213.3.13:2380")
    assert f["--client-cert-auth"] == "true" and f["--peer-client-cert-auth"] == "true"
    assert f["--heartbeat-interval"] == "100" and f["--election-timeout"] == "1000"


def test_a_split_etcd_member_bootstraps_alone_and_the_apiservers_leave_it_out():
    twin = layout(topology=load_topology(CLUSTERS / "defects" / "etcd-split-member.yaml"))
    split, kept = flags(by_id(twin)["etcd@c3"]), flags(by_id(twin)["etcd@c1"])
    assert split["--initial-cluster"] == "c3=https://10.213.33.13:2380"
    assert kept["--initial-cluster"].count("=https://") == 3
    assert split["--initial-cluster-token"] != kept["--initial-cluster-token"]
    assert flags(by_id(twin)["kube-apiserver@c3"])["--etcd-servers"] == "https://10.213.33.11:2379,https://10.213.33.12:2379"


def test_etcd_without_peer_tls_uses_http_peers_and_no_peer_certs():
    t = parse_topology({**load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json"), "etcd": {"peer_tls": False}})
    f = flags(by_id(layout(topology=t))["etcd@c1"])
    assert f["--initial-advertise-peer-urls"].startswith("http://")
    assert "--peer-cert-file" not in f


def test_apiserver_lists_every_etcd_member_and_authorizes_with_node_and_rbac():
    spec = by_id(layout())["kube-apiserver@c3"]
    f = flags(spec)
    assert f["--etcd-servers"] == "https://10.213.3.11:2379,https://10.213.3.12:2379,https://10.213.3.13:2379"
    assert f["--authorization-mode"] == "Node,RBAC"
    assert f["--bind-address"] == "10.213.3.13"
    assert "--anonymous-auth" not in f  # anonymous access is limited by the authentication config instead
    (config,) = spec.files.values()
    assert "path: /readyz" in config and "enabled: true" in config
    assert spec.health.url == "https://10.213.3.13:6443/readyz"


def test_apiserver_extra_flags_are_appended():
    data = load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json")
    data["apiserver"]["extra_flags"] = {"--v": "2"}
    assert "--v=2" in by_id(layout(topology=parse_topology(data)))["kube-apiserver@c1"].argv


def test_the_apiserver_keeps_serving_for_its_shutdown_delay_so_the_lb_takes_it_out_first():
    topology = load_topology(CLUSTERS / "ha3.yaml")
    check = topology.load_balancer.health_check
    assert topology.apiserver.shutdown_delay_s > check.fall * check.interval_s
    assert flags(by_id(layout())["kube-apiserver@c1"])["--shutdown-delay-duration"] == "8000ms"
    data = topology.model_dump(mode="json")
    data["apiserver"]["shutdown_delay_s"] = 0  # kube-apiserver's own default: the flag is left out
    assert "--shutdown-delay-duration" not in flags(by_id(layout(topology=parse_topology(data)))["kube-apiserver@c1"])


@pytest.mark.parametrize("component, port", [("kube-controller-manager", "10257"), ("kube-scheduler", "10259")])
def test_leader_election_flags_follow_the_topology(component, port):
    f = flags(by_id(layout())[f"{component}@c1"])
    assert f["--leader-elect"] == "true"
    assert f["--leader-elect-lease-duration"] == "15000ms"
    assert f["--leader-elect-renew-deadline"] == "10000ms"
    assert f["--leader-elect-retry-period"] == "2000ms"
    assert f["--secure-port"] == port
    assert f["--kubeconfig"] == f"/run-dir/config/c1/{component.removeprefix('kube-')}.kubeconfig"


def test_leader_election_can_be_disabled():
    data = load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json")
    data["leader_election"]["enabled"] = False
    f = flags(by_id(layout(topology=parse_topology(data)))["kube-scheduler@c1"])
    assert f["--leader-elect"] == "false" and "--leader-elect-lease-duration" not in f


def test_the_upstream_default_profile_runs_the_scheduler_from_flags_alone():
    spec = by_id(layout())["kube-scheduler@c1"]
    assert not spec.files and "--config" not in flags(spec) and flags(spec)["--profiling"] == "false"


def test_other_scheduler_profiles_are_written_into_a_configuration_file_the_lease_flags_still_apply_over():
    """With --config kube-scheduler ignores --kubeconfig and --profiling: the file must carry both, and the
    profiles; the leader-election flags stay on the command line, where they override the file."""
    import yaml

    spec = by_id(layout("defects/scheduler-misnamed-profile.yaml"))["kube-scheduler@c2"]
    f = flags(spec)
    assert "--kubeconfig" not in f and "--profiling" not in f
    assert f["--leader-elect-lease-duration"] == "15000ms" and f["--authentication-kubeconfig"]
    (path, text), = spec.files.items()
    assert f["--config"] == str(path) == "/run-dir/config/c2/kube-scheduler.yaml"
    config = yaml.safe_load(text)
    assert config["kind"] == "KubeSchedulerConfiguration" and config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["clientConnection"] == {"kubeconfig": "/run-dir/config/c2/scheduler.kubeconfig"}
    assert config["profiles"] == [{"schedulerName": "default"}] and config["enableProfiling"] is False


@pytest.mark.parametrize("profiles, says", [
    (["default-scheduler", "default-scheduler"], "repeat a name"),
    (["Default"], "is not a scheduler name"),
    (["a\nb"], "holds a control character"),
    ([], "at least 1 item"),
])
def test_scheduler_profiles_that_kube_scheduler_would_refuse_are_refused_with_the_fix(profiles, says):
    from harness.errors import TopologyError

    data = load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json")
    data["scheduler"] = {"profiles": profiles}
    with pytest.raises(TopologyError) as raised:
        parse_topology(data)
    assert says in str(raised.value) and "scheduler" in str(raised.value)


def test_haproxy_checks_readyz_over_verified_tls_with_the_topology_timings():
    spec = by_id(layout())["haproxy@lb"]
    (config,) = spec.files.values()
    assert "http-check send meth GET uri /readyz" in config
    assert "inter 2000ms fall 3 rise 2 check check-ssl verify required ca-file /run-dir/pki/ca.crt" in config
    for host, address in (("c1", "10.213.3.11"), ("c2", "10.213.3.12"), ("c3", "10.213.3.13")):
        assert f"server {host} {address}:6443" in config
    assert "bind 10.213.3.10:6443" in config


def test_haproxy_without_health_checks_has_no_check_lines():
    data = load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json")
    data["load_balancer"]["health_check"]["enabled"] = False
    (config,) = by_id(layout(topology=parse_topology(data)))["haproxy@lb"].files.values()
    assert "httpchk" not in config and " check" not in config.replace("timeout check", "")


def test_haproxy_retries_a_refused_connection_on_another_apiserver_and_a_blind_twins_balancer_none():
    assert "  retries 3\n  option redispatch 1\n" in by_id(layout())["haproxy@lb"].files.popitem()[1]
    data = load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json")
    data["load_balancer"]["redispatch"] = False
    (config,) = by_id(layout(topology=parse_topology(data)))["haproxy@lb"].files.values()
    assert "  retries 0\n" in config and "redispatch" not in config


def test_restart_policy_comes_from_the_topology():
    data = load_topology(CLUSTERS / "ha3.yaml").model_dump(mode="json")
    data["restart"]["etcd"] = {"policy": "never"}
    assert by_id(layout(topology=parse_topology(data)))["etcd@c1"].restart.policy == "never"
    assert by_id(layout())["etcd@c1"].restart.policy == "always"
    assert Component.ETCD.value == "etcd"


def test_live_flags_parse_like_the_components_and_durations_read_like_go():
    assert parse_flags(["--a=1", "positional", "--b", "--a=2", "-v=3"]) == {"--a": "2", "--b": ""}
    assert parse_flags(["--etcd-servers=https://x:2379,https://y:2379"])["--etcd-servers"] == "https://x:2379,https://y:2379"
    assert [go_duration_s(text) for text in ("15s", "15000ms", "1m30s", "1.5s", "250ms")] == [15.0, 15.0, 90.0, 1.5, 0.25]
    for bad in ("15", "15 s", "s", "15sx"):
        with pytest.raises(ClusterError, match="not a Go duration"):
            go_duration_s(bad)
