"""The remote backend's pure parts: the kubeconfig's credentials copied privately with the API endpoint as server,
the run directory's copy of an inventory with absolute paths, and what the plugin refuses on a remote target
(pytest --target). Against a real cluster: tests/integration/test_inventory_check.py."""

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.backends.registry import get
from harness.backends.remote.backend import with_absolute_paths
from harness.remote.credentials import api_credentials
from harness.errors import ClusterError
from harness.inventory.load import load_inventory
from tests.collect import collect_only
from tests.unit.test_inventory import example, usable

ROOT = Path(__file__).resolve().parents[2]
PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def kubeconfig(user: dict, server: dict | None = None) -> dict:
    server = {"server": "https://elsewhere:6443", "certificate-authority-data": base64.b64encode(PEM).decode()} \
        if server is None else server
    return {"apiVersion": "v1", "kind": "Config", "current-context": "admin@staging",
            "clusters": [{"name": "c", "cluster": server}], "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "admin@staging", "context": {"cluster": "c", "user": "u"}}]}


def inventory_with(tmp_path: Path, config: dict):
    path = usable(tmp_path, example())
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump(config))
    return load_inventory(path)


def test_a_client_certificate_is_copied_private_and_the_api_endpoint_becomes_the_server(tmp_path):
    (tmp_path / "client.key").write_bytes(b"KEY")  # a file the kubeconfig names, relative to itself
    inventory = inventory_with(tmp_path, kubeconfig({"client-certificate-data": base64.b64encode(PEM).decode(),
                                                     "client-key": "client.key"}))
    run_dir = tmp_path / "run"
    credentials = api_credentials(inventory, tmp_path, run_dir)
    assert credentials.client.key.read_bytes() == b"KEY" and credentials.ca.read_bytes() == PEM
    for path in (credentials.kubeconfig, credentials.ca, credentials.client.cert, credentials.client.key):
        assert path.stat().st_mode & 0o077 == 0, path
    written = yaml.safe_load(credentials.kubeconfig.read_text())
    assert written["clusters"][0]["cluster"]["server"] == inventory.api_endpoint
    assert credentials.token is None


def test_a_token_is_used_when_there_is_no_client_certificate(tmp_path):
    inventory = inventory_with(tmp_path, kubeconfig({"token": "abc"}))
    credentials = api_credentials(inventory, tmp_path, tmp_path / "run")
    assert credentials.client is None and credentials.token == "abc"


@pytest.mark.parametrize("user, server, says", [
    ({"exec": {"command": "aws"}}, None, "authenticates with an exec plugin (aws)"),
    ({"token": "abc"}, {"server": "https://x:6443", "insecure-skip-tls-verify": True}, "names no certificate authority"),
    ({"client-certificate": "missing.crt", "client-key-data": "S0VZ"}, None, "cannot be read"),
])
def test_a_kubeconfig_quorum_cannot_use_is_named_with_the_fix(tmp_path, user, server, says):
    inventory = inventory_with(tmp_path, kubeconfig(user, server))
    with pytest.raises(ClusterError) as error:
        api_credentials(inventory, tmp_path, tmp_path / "run")
    assert says in error.value.problem and error.value.fix


def test_the_run_directory_copy_of_an_inventory_names_every_local_file_by_its_absolute_path(tmp_path):
    inventory = load_inventory(usable(tmp_path, example()))
    data = with_absolute_paths(inventory, tmp_path)
    assert data["kubeconfig"]["path"] == str(tmp_path / "kubeconfig")
    assert data["ssh"]["key_file"] == str(tmp_path / "key") and data["ssh"]["known_hosts"] == str(tmp_path / "known_hosts")
    assert data["etcd"]["ca"] == inventory.etcd.ca  # on_hosts: a path on the hosts, not here
    copy = tmp_path / "elsewhere" / "inventory.yaml"
    copy.parent.mkdir()
    copy.write_text(yaml.safe_dump(data))
    again = load_inventory(copy)  # read from another folder, it names the same files
    assert again.kubeconfig.path == str(tmp_path / "kubeconfig") and again.hosts == inventory.hosts
    assert again.components == inventory.components and again.load_balancer == inventory.load_balancer


def test_destructive_scenarios_run_only_on_a_disposable_remote_target_whose_components_have_a_keeper(tmp_path):
    remote = get("remote")
    data = example()
    assert "is not disposable (disposable: false)" in remote.destructive_refusal(load_inventory(usable(tmp_path, data)))
    data["disposable"] = True  # etcd a systemd unit, the rest static pods: each can be held and overridden
    assert remote.destructive_refusal(load_inventory(usable(tmp_path, data))) is None
    data["components"]["kube-scheduler"] = {"runs_as": "process"}
    refusal = remote.destructive_refusal(load_inventory(usable(tmp_path, data)))
    assert "kube-scheduler run(s) as a plain process" in refusal and "static pod or a systemd unit" in refusal
    assert get("process").destructive_refusal(get("process").load_topology(ROOT / "clusters" / "ha3.yaml")) is None


def test_the_static_pod_suite_is_offered_where_the_inventory_says_the_apiserver_is_a_static_pod(tmp_path):
    from harness.target.capabilities import Capability

    remote = get("remote")
    data = example()  # the apiserver a static pod
    assert remote.lacks(Capability.STATIC_PODS, topology=load_inventory(usable(tmp_path, data))) is None
    data["components"]["kube-apiserver"] = {"runs_as": "systemd", "unit": "kube-apiserver.service"}
    reason = remote.lacks(Capability.STATIC_PODS, topology=load_inventory(usable(tmp_path, data)))
    assert reason.startswith("it needs static-pods (") and "kube-apiserver runs as systemd" in reason, reason
    assert remote.lacks(Capability.NODE_POWER, topology=load_inventory(usable(tmp_path, data)))  # the power loss


def test_the_controllers_work_is_probed_only_where_the_inventory_allows_objects_of_quorums_own(tmp_path):
    """The conformance suite's work probes create and delete namespaces and Deployments: on a staging cluster only
    with work_probes: true; a disposable one allows them anyway; every cluster Quorum builds offers them."""
    from harness.target.capabilities import Capability

    remote = get("remote")
    data = {**example(), "work_probes": False}
    assert data["disposable"] is False  # the example: a staging cluster
    reason = remote.lacks(Capability.WORK_PROBES, topology=load_inventory(usable(tmp_path, data)))
    assert reason.startswith("it needs work-probes (") and "work_probes: true" in reason, reason
    for allowing in ({"work_probes": True}, {"disposable": True}):
        assert remote.lacks(Capability.WORK_PROBES, topology=load_inventory(usable(tmp_path, {**data, **allowing}))) \
            is None, allowing
    assert all(get(backend).lacks(Capability.WORK_PROBES) is None for backend in ("process", "docker", "kind"))


def test_target_takes_no_backend_or_topology(tmp_path):
    result = collect_only("scenarios/etcd", "--target", str(tmp_path / "inventory.yaml"), "--backend", "kind")
    assert result.returncode != 0 and "--target names a cluster Quorum did not build" in result.stderr, result.stderr


def test_a_maintenance_window_may_run_past_midnight():
    from datetime import time

    from harness.backends.remote.limits import within

    assert within(time(23, 0), time(22, 0), time(4, 0)) and within(time(3, 59), time(22, 0), time(4, 0))
    assert not within(time(4, 0), time(22, 0), time(4, 0)) and not within(time(12, 0), time(22, 0), time(4, 0))
    assert within(time(12, 0), time(9, 0), time(17, 0)) and not within(time(17, 0), time(9, 0), time(17, 0))


def test_the_inventorys_limits_refuse_a_fault_before_it_acts_naming_the_limit():
    from datetime import datetime, timezone

    from harness.backends.remote.limits import admit
    from harness.errors import FaultError
    from harness.faults import Kill
    from harness.faults.network import IsolateEtcdLeader, Partition
    from harness.inventory.model import Limits

    hosts = {"controller-0", "controller-1", "controller-2"}
    limits = Limits(max_faults_at_once=1, allowed_hosts=["controller-2"], window_utc="22:00-04:00")
    night, noon = datetime(2026, 11, 26, 23, 30, tzinfo=timezone.utc), datetime(2026, 11, 26, 12, 0, tzinfo=timezone.utc)
    allowed = Kill(component="kube-scheduler@controller-2")
    admit(limits, allowed, [], hosts, night)  # inside every limit: nothing raised

    def refusal(fault, active=(), now=night) -> str:
        with pytest.raises(FaultError) as refused:
            admit(limits, fault, list(active), hosts, now)
        assert refused.value.fix
        return refused.value.problem

    assert "outside the inventory's maintenance window 22:00-04:00" in refusal(allowed, now=noon)
    assert "1 fault(s) already active" in refusal(allowed, active=[Kill(component="etcd@controller-2")])
    assert "it acts on ['controller-0']" in refusal(Kill(component="kube-scheduler@controller-0"))
    assert "it acts on ['controller-1']" in refusal(Partition(side_a=["controller-2"], side_b=["controller-1"]))
    assert "names no host" in refusal(IsolateEtcdLeader())  # not planned: which leader is not known
    planned = IsolateEtcdLeader(captured={"leader": "controller-2", "others": ["controller-0"]})
    assert "it acts on ['controller-0']" in refusal(planned)


def test_a_bad_inventory_is_one_clear_error_before_any_test(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pytest", "scenarios/etcd", "--target", str(tmp_path / "none.yaml"),
                             "-p", "no:cacheprovider", "--history-dir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 4 and "does not exist" in result.stderr and "fix:" in result.stderr, result.stderr
    assert "Traceback" not in result.stdout + result.stderr


class UnitsOnHosts:
    """What a remote target's keepers ask of it: its inventory, the hosts of a component, a command's output."""

    def __init__(self, inventory, shown: dict[str, str]):
        self.topology, self.shown, self.asked = inventory, shown, []

    def component_hosts(self, component):
        return list(self.shown)

    def exec(self, host, argv, **_):
        self.asked.append((host, argv))
        return self.shown[host]


def test_a_systemd_components_budget_is_its_slowest_hosts_restart_delay_plus_its_start_up(tmp_path):
    from harness.backends.remote.keepers import keeper_of
    from harness.components.static_pod_keeper import StaticPodKeeper
    from harness.components.systemd_keeper import SystemdKeeper
    from harness.thresholds import STARTUP_ALLOWANCE_S, static_pod_restart_budget_s
    from harness.topology import Component

    inventory = load_inventory(usable(tmp_path, example()))  # etcd: etcd-member.service; the rest static pods
    shown = "LoadState=loaded\nRestart=always\nRestartUSec={}\nStartLimitIntervalUSec=0\nNRestarts=2\n"
    target = UnitsOnHosts(inventory, {"controller-0": shown.format("5s"), "controller-1": shown.format("1min")})
    etcd, scheduler = keeper_of(target, Component.ETCD), keeper_of(target, Component.SCHEDULER)
    assert isinstance(etcd, SystemdKeeper) and isinstance(scheduler, StaticPodKeeper)
    assert etcd.restart_budget_s(kill=1) == 60.0 + STARTUP_ALLOWANCE_S[Component.ETCD]
    assert target.asked[0][1][:2] == ["systemctl", "show"] and target.asked[0][1][-1] == "etcd-member.service"
    assert etcd.restarts("controller-0") == 2
    # a static pod: the kubelet's crash back-off, nothing read from the hosts
    asked = len(target.asked)
    assert scheduler.restart_budget_s(kill=1) == static_pod_restart_budget_s(Component.SCHEDULER, 1, 0)
    assert len(target.asked) == asked


def test_a_static_pods_back_off_resets_as_its_kubelets_and_a_units_does_not_grow(tmp_path):
    import time

    from harness.backends.remote.keepers import keeper_of
    from harness.clients.kubeapi import PodRestarts
    from harness.topology import Component

    class MirrorPods:
        def mirror_pod(self, name, node):
            return {"kube-scheduler-node-0": PodRestarts(2, time.time() - 100)}.get(f"{name}-{node}")

    inventory = load_inventory(usable(tmp_path, example()))  # etcd: etcd-member.service; the rest static pods
    target = UnitsOnHosts(inventory, {"controller-0": "node-0\n", "controller-1": "node-9\n"})
    target.api = MirrorPods()
    etcd, scheduler = keeper_of(target, Component.ETCD), keeper_of(target, Component.SCHEDULER)
    assert etcd.back_off_reset_in_s("controller-0") == 0.0  # RestartSec does not grow
    assert 499 < scheduler.back_off_reset_in_s("controller-0") <= 501
    with pytest.raises(ClusterError, match="no mirror pod kube-scheduler-node-9"):
        scheduler.back_off_reset_in_s("controller-1")


def test_a_plain_process_has_no_keeper_so_holds_overrides_and_promises_are_unsupported_with_the_fix(tmp_path):
    from harness.backends.remote.keepers import keeper_of
    from harness.target.protocol import Unsupported
    from harness.topology import Component

    data = example()
    data["components"]["kube-scheduler"] = {"runs_as": "process"}
    target = UnitsOnHosts(load_inventory(usable(tmp_path, data)), {"controller-0": ""})
    keeper = keeper_of(target, Component.SCHEDULER)
    for act in (lambda: keeper.hold("controller-0"), lambda: keeper.override("controller-0", ["kube-scheduler"]),
                lambda: keeper.release("controller-0"), lambda: keeper.restore("controller-0"),
                lambda: keeper.restarts("controller-0"), lambda: keeper.restart_budget_s(kill=1)):
        with pytest.raises(Unsupported, match="kube-scheduler runs as process") as refused:
            act()
        assert "static pod or a systemd unit" in refused.value.fix
    # nothing was held or overridden, so there is nothing to undo, and nothing was run on the host
    assert not keeper.held("controller-0") and keeper.sweep("controller-0") == [] and keeper.command_line("c") is None
    assert target.asked == []


def test_a_fault_the_owners_limits_refuse_skips_its_scenario_naming_the_limit(tmp_path):
    """The cluster did nothing wrong when its owner's limits refuse a fault: the scenario is skipped, not failed."""
    (tmp_path / "test_refused.py").write_text(
        "from harness.errors import FaultRefused\n\n\ndef test_refused():\n"
        "    raise FaultRefused('kill refused: 23:00 UTC is outside the window', 'run inside limits.window_utc')\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "fixtures.plugin", "test_refused.py", "-q", "-rs",
                             "-p", "no:cacheprovider", f"--history-dir={tmp_path / 'histories'}"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0 and "1 skipped" in result.stdout, result.stdout + result.stderr
    assert "outside the window (fix: run inside limits.window_utc)" in result.stdout, result.stdout


def test_a_tool_on_someone_elses_hosts_is_theirs_found_on_each_host_or_refused_naming_the_host():
    from harness.backends.remote.target import RemoteTarget
    from harness.target.hosts import Ran
    from harness.target.protocol import Unsupported

    class Hosts(RemoteTarget):
        """Each host's answer to `command -v`, and what was asked."""

        def __init__(self, found: dict[str, str]) -> None:
            self.found, self.asked = found, []

        def hosts(self, role=None) -> list[str]:
            return list(self.found)

        def run(self, host, argv, timeout=60.0) -> Ran:
            self.asked.append(argv)
            return Ran(tuple(argv), 0, self.found[host] + "\n" if self.found[host] else "", "")

    everywhere = Hosts({"c1": "/usr/bin/iperf3", "c2": "/usr/bin/iperf3"})
    assert everywhere.tool_path("iperf3") == everywhere.tool_path("iperf3") == "/usr/bin/iperf3"
    assert len(everywhere.asked) == 2 and everywhere.asked[0][-1] == "iperf3"  # once per host, the name an argument
    with pytest.raises(Unsupported) as missing:
        Hosts({"c1": "/usr/bin/iperf3", "c2": ""}).tool_path("iperf3")
    assert "iperf3 is not installed on c2" in missing.value.problem and "apt-get install iperf3" in missing.value.fix
    with pytest.raises(Unsupported, match="different paths"):
        Hosts({"c1": "/usr/bin/iperf3", "c2": "/opt/bin/iperf3"}).tool_path("iperf3")
    with pytest.raises(ValueError):
        everywhere.tool_path("iperf3; reboot")


def test_a_misconfigured_etcd_endpoint_on_someone_elses_cluster_points_at_the_hosts_own_loopback():
    """Quorum sends nothing into a network it did not create: the wrong etcd endpoint the flag suite and the aborted
    upgrade write is the apiserver host's loopback, port 1, never an address of the inventory's network."""
    from harness.backends.remote.target import RemoteTarget

    target = RemoteTarget.__new__(RemoteTarget)  # no inventory needed: the answer is the same for any
    assert target.unanswered_etcd_url() == "https://127.0.0.1:1"
