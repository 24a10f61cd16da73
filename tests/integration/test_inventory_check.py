"""`quorum inventory check` against a stand-in staging cluster (tests/integration/standin.py): a real cluster
reached only over its kubeconfig, its API endpoint, SSH and etcd's client certificate. Every piece is found, and
each bad input is named with its fix, with nothing changed on the cluster."""

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.backends import registry
from harness.target.protocol import HostRole
from harness.topology import Component
from harness.wait import wait_for
from tests.collect import collect_only, node_ids
from harness.backends.process.target import ProcessTarget
from tests.integration.conftest import CLUSTERS, ROOT, on_a_free_subnet, on_a_spare_subnet, on_subnet, running
from tests.integration.standin import inventory_check, standin
from tests.integration.test_defect_twins import CASES, CONFORMANCE
from tests.protocol_checks import check_target
from tests.tiers import Selection, fails, passes

STANDIN_SUBNET, OTHER_SUBNET = "10.213.50.0/24", "10.213.42.0/24"  # no checked-in topology or other test uses them
# the twins these tests drive through an inventory: weak-apiserver's conformance checks, kind-restart-never's kill
WEAK_APISERVER = CONFORMANCE["weak-apiserver"]
KIND_RESTART_NEVER = next(c for c in CASES if c[0] == "kind-restart-never" and "self_healing" in c[1])


@pytest.fixture(scope="module")
def ha3(tmp_path_factory) -> ProcessTarget:
    """ha3 on a subnet of this module's own: its clusters never meet another test's, whichever lane runs it."""
    work = tmp_path_factory.mktemp("ha3-standin")
    with running(on_subnet(CLUSTERS / "ha3.yaml", work, STANDIN_SUBNET), work / "run") as cluster:
        yield cluster


@pytest.fixture(scope="module")
def staging(ha3, tmp_path_factory):
    with standin(ha3, tmp_path_factory.mktemp("standin")) as stand_in:
        yield stand_in


def every_apiserver_advertised(cluster) -> bool:
    """Each apiserver adds itself to the kubernetes service's endpoints on its reconciler's next pass (every 10 s),
    which a freshly built cluster may not have had yet."""
    response = cluster.api.get("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
                               "?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes", 5.0)
    addresses = {a for s in response.json().get("items", []) for e in s.get("endpoints") or [] for a in e["addresses"]}
    return addresses == {cluster.address(h) for h in cluster.hosts(HostRole.CONTROLLER)}


def test_every_piece_of_a_cluster_is_found_over_its_kubeconfig_ssh_and_etcd_certificate(staging, ha3):
    wait_for(lambda: every_apiserver_advertised(ha3), 60, 1.0, what="every apiserver in the kubernetes endpoints")
    code, output = inventory_check(staging.inventory)
    assert code == 0, output
    for host in ("c1", "c2", "c3"):
        assert f"ssh {host}" in output
        for component in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            assert f"{component}@{host}" in output
    assert "Kubernetes v1.34.4" in output and "etcd members" in output and "['c1', 'c2', 'c3']" in output
    assert "controllers among them: ['c1', 'c2', 'c3']" in output
    assert ha3.api.lease_holder("kube-scheduler").identity in output  # as the cluster's own client reads it
    assert "FAIL" not in output


def test_a_wrong_key_a_changed_or_unknown_host_key_and_an_unreachable_host_are_each_named(staging, ha3, tmp_path):
    other_key = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True)
    code, output = inventory_check(staging.write(ssh={"user": "root", "key_file": str(other_key),
                                                      "known_hosts": str(staging.known_hosts)}))
    assert code == 2 and "FAIL ssh c1: c1 (root@" in output and "the login was refused for root" in output, output

    changed = tmp_path / "known_hosts"
    other_pub = other_key.with_suffix(".pub").read_text().split()
    changed.write_text("".join(f"{line.split()[0]} {other_pub[0]} {other_pub[1]}\n"
                               for line in staging.known_hosts.read_text().splitlines()))
    code, output = inventory_check(staging.write(ssh={"user": "root", "key_file": str(staging.key),
                                                      "known_hosts": str(changed)}))
    assert code == 2 and "is not the one" in output and "fingerprint" in output, output

    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    code, output = inventory_check(staging.write(ssh={"user": "root", "key_file": str(staging.key),
                                                      "known_hosts": str(empty)}))
    assert code == 2 and "does not list this host's key (host_key_policy: strict)" in output, output

    nobody = str(ha3.topology.network.subnet.broadcast_address - 1)  # inside Quorum's subnet, owned by nobody
    hosts = [{"name": "c1", "address": nobody, "roles": ["controller", "etcd"]}]
    code, output = inventory_check(staging.write(hosts=hosts))
    assert code == 2 and f"FAIL ssh c1: c1 (root@{nobody}:22): unreachable" in output, output


def test_a_wrong_manifest_dir_is_named(staging):
    static = {"runs_as": "static-pod", "manifest_dir": "/etc/kubernetes/manifests"}
    components = {c: static for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")}
    code, output = inventory_check(staging.write(components=components))
    assert code == 2 and "no static pod manifest /etc/kubernetes/manifests/kube-apiserver.yaml" in output, output
    assert "staticPodPath" in output


def test_a_kubeconfig_for_another_cluster_is_named(staging, tmp_path):
    with running(on_subnet(CLUSTERS / "single.yaml", tmp_path, OTHER_SUBNET), tmp_path / "other") as other:
        code, output = inventory_check(staging.write(kubeconfig={"path": str(other.admin_kubeconfig)},
                                                     api_endpoint=other.api_endpoint))
    assert code == 2 and "FAIL apiservers" in output and "controllers among them: none" in output, output
    assert "another cluster's" in output


def test_accept_new_remembers_each_host_key_on_first_contact_and_strict_then_accepts_them(staging, tmp_path):
    known = tmp_path / "known_hosts"
    authority = " ".join(staging.key.with_suffix(".pub").read_text().split()[:2])  # any valid public key
    known.write_text(f"@cert-authority *.example.org {authority}\n")
    ssh = {"user": "root", "key_file": str(staging.key), "known_hosts": str(known)}
    code, output = inventory_check(staging.write(ssh={**ssh, "host_key_policy": "accept-new"}))
    assert code == 0, output
    lines = known.read_text().splitlines()
    assert lines[0].startswith("@cert-authority") and len(lines) == 4, lines  # kept, and one line per host
    code, output = inventory_check(staging.write(ssh=ssh))
    assert code == 0, output


def scenarios_against(inventory, tmp_path, selection: str = "scenarios/", *options: str) -> tuple[int, dict[str, tuple[str, str]]]:
    """`pytest <selection> --target INVENTORY` in a child session: its exit code and each test's outcome and
    message from its junit report."""
    import xml.etree.ElementTree as ElementTree

    histories = tmp_path / "histories"
    result = subprocess.run([sys.executable, "-m", "pytest", selection, *options, f"--target={inventory}",
                             f"--run-dir={tmp_path / 'run'}", f"--history-dir={histories}", "-p", "no:cacheprovider",
                             "-q", "-rs"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    outcomes = {}
    for case in ElementTree.parse(histories / "junit.xml").iter("testcase"):
        verdict = next(iter(case), None)
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        outcomes[name] = ("passed", "") if verdict is None else (verdict.tag, verdict.get("message", ""))
    print(result.stdout[-3000:], result.stderr[-2000:])
    return result.returncode, outcomes


def destructive_tests(selection: str = "scenarios/", marks: str = "destructive and not hollow_nodes",
                      *ignore: str) -> set[str]:
    """The destructive scenarios a run of `selection` collects (as `file::test`), but those under `ignore`."""
    ignored = [f"--ignore={path}" for path in ignore]
    return {node.split("/")[-1].replace(".py", "") for node in node_ids(collect_only(selection, "-m", marks, *ignored))}


# what passes on someone else's cluster read only: every scenario that is not destructive, but the bandwidth floors,
# which are judged alone (test_the_bandwidth_suite_runs_over_ssh_with_the_hosts_own_iperf3)
BANDWIDTH = "scenarios/bandwidth/test_bandwidth.py"


# the checks of the nodes skip on the process stand-in, which has none: test_kind_cluster.py proves them through the
# kubeadm stand-in's inventory
NODE_CHECKS = "scenarios/conformance/test_nodes.py"
# the scheduler's binding and the endpoints' checks need hollow nodes, which this stand-in's inventory has not: the
# deep stand-in with hollow nodes proves them (test_hollow_nodes_on_a_disposable_target_...)
SCHEDULER_BINDS = "scenarios/conformance/test_controllers.py::test_the_scheduler_binds_the_pods_a_user_asks_for"
ENDPOINTS_FOLLOW = "scenarios/conformance/test_controllers.py::test_services_list_their_ready_pods_in_their_endpoint_slices"


@passes("remote", Selection(("scenarios/",), markers="not hollow_nodes and not destructive",
                            deselect=(SCHEDULER_BINDS, ENDPOINTS_FOLLOW), ignore=(BANDWIDTH, NODE_CHECKS)))
def test_the_suites_run_against_a_target_they_did_not_build_and_skip_every_destructive_scenario(staging, ha3, tmp_path):
    """`pytest scenarios/ --target` on someone else's cluster (disposable: false): the read-only checks run over SSH,
    the API and etcd, and the controllers' work probes its inventory allows (work_probes: true), and pass on this
    healthy cluster; every destructive scenario is skipped with the reason; the cluster is left exactly as it was
    (the same processes)."""
    before = {(c.value, h): ha3.pid(c, h) for c in (Component.ETCD, Component.APISERVER) for h in ha3.hosts(HostRole.CONTROLLER)}
    # the steady load runs on a target too (deep: test_the_steady_load_runs_on_a_target_...): left out here for time
    code, outcomes = scenarios_against(staging.write(disposable=False, work_probes=True), tmp_path, "scenarios/", "-m",
                                       "not hollow_nodes", f"--ignore={BANDWIDTH}", f"--deselect={SCHEDULER_BINDS}",
                                       f"--deselect={ENDPOINTS_FOLLOW}")
    assert code == 0, {name: outcome for name, outcome in outcomes.items() if outcome[0] not in ("passed", "skipped")}
    passed = {name for name, (outcome, _) in outcomes.items() if outcome == "passed"}
    for name in ("test_conformance::test_etcd_members_are_exactly_the_etcd_hosts",
                 "test_conformance::test_every_apiserver_lists_every_etcd_member",
                 "test_conformance::test_anonymous_requests_are_refused_except_on_health_endpoints",
                 "test_conformance::test_the_etcd_client_port_is_reachable_from_every_controller",
                 "test_configuration::test_the_load_balancers_checks_promise_the_detection_objectives",
                 "test_configuration::test_the_etcd_timings_promise_the_leader_change_and_write_stall_objectives",
                 "test_configuration::test_the_lease_timings_promise_the_failover_and_give_up_objectives[kube-scheduler]",
                 "test_etcd_quorum::test_members_use_tls_on_peer_and_client_urls",
                 "test_controllers::test_the_controller_manager_does_the_work_a_user_asks_of_it",
                 "test_certificates::test_every_listener_serves_a_certificate_its_clients_trust_with_the_days_left_"
                 "the_objective_needs"):
        assert name in passed, (name, outcomes.get(name))
    destructive = destructive_tests("scenarios/", "destructive and not hollow_nodes", BANDWIDTH)
    assert destructive and destructive <= set(outcomes), destructive - set(outcomes)
    for name in destructive:
        outcome, message = outcomes[name]
        assert outcome == "skipped", (name, outcome, message)
        assert "standin is not disposable (disposable: false)" in message or "not on --target" in message, (name, message)
    assert any("standin is not disposable" in outcomes[name][1] for name in destructive)
    described = json.loads((tmp_path / "histories" / "cluster.json").read_text())  # what the gate names
    assert (described["target"], described["api_endpoint"]) == ("standin", ha3.api_endpoint), described
    assert described["kubernetes"] == "v1.34.4" and described["etcd"].startswith("3."), described
    assert {(c.value, h): ha3.pid(c, h) for c in (Component.ETCD, Component.APISERVER)
            for h in ha3.hosts(HostRole.CONTROLLER)} == before


@passes("remote", Selection(("scenarios/load/test_load.py::test_steady_load_meets_the_slos",)))
@pytest.mark.deep("re-proves through the remote backend the load verdicts CI proves on ha3-1000 (latency, errors; "
                  "the same checkers), on real nodes read only and config maps in Quorum's namespace (~2 min)")
def test_the_steady_load_runs_on_a_target_without_hollow_nodes_and_the_faults_under_load_are_skipped(staging, tmp_path):
    """`pytest scenarios/load --target` on someone else's cluster (disposable: false): the steady load runs as the
    kubeconfig's identity with TARGET_MIX (the real nodes only read, no pods created) and meets the SLOs; the
    scenarios that need hollow nodes and the LB's admin socket are skipped, saying so."""
    code, outcomes = scenarios_against(staging.write(disposable=False), tmp_path, "scenarios/load")
    assert code == 0 and outcomes["test_load::test_steady_load_meets_the_slos"] == ("passed", ""), outcomes
    for name in destructive_tests("scenarios/load", "destructive"):
        outcome, message = outcomes[name]
        # the first thing a scenario lacks says why: the LB's admin socket (the remote backend has none), the hollow
        # nodes this inventory asks none of, or a disposable target
        assert outcome == "skipped" and any(reason in message for reason in ("lb-admin", "hollow-nodes",
                                                                             "not disposable")), (name, message)
    steady = [json.loads(line) for line in next((tmp_path / "histories").glob("*steady_load*.jsonl")).open()]
    written = {(r["f"], r["target"]) for r in steady if r.get("kind") == "op" and r["f"].startswith("load.")
               and r["f"] not in ("load.get", "load.list", "load.watch")}
    assert written and {target for _, target in written} == {"configmaps"}, written  # nothing but its config maps


# the dead node needs a destructive run, which the stand-in's plain-process components refuse (tests/known_gaps.py)
HOLLOW_ON_A_TARGET = ("scenarios/load/test_pod_startup.py", "scenarios/load/test_load.py::test_steady_load_meets_the_slos",
                      SCHEDULER_BINDS, ENDPOINTS_FOLLOW)


@passes("remote", Selection(HOLLOW_ON_A_TARGET))
@pytest.mark.deep("the load suite's hollow-node verdicts through the remote backend, whose hollow nodes a kwok controller "
                  "on this machine plays (CI proves the same checkers on ha3-1000's own); ~2 min")
def test_hollow_nodes_on_a_disposable_target_carry_the_heartbeat_and_pod_startup_verdicts(staging, ha3, tmp_path):
    """An inventory's `hollow_nodes:` on a disposable stand-in: the session's kwok controller (on this machine, against
    the target's API) plays 20 tainted nodes; the steady load's heartbeat verdict, pod start-up and the scheduler's
    binding and endpoints checks pass through them; when the session ends its nodes are deleted and its kwok
    controller stopped."""
    from harness.remote.hollow_fleet import RUN_LABEL

    inventory = staging.write(disposable=True, hollow_nodes={"count": 20})
    try:
        code, outcomes = scenarios_against(inventory, tmp_path, HOLLOW_ON_A_TARGET[0], "scenarios/load/test_load.py",
                                           SCHEDULER_BINDS, ENDPOINTS_FOLLOW,
                                           "-k", "steady_load_meets or stateless_pods or scheduler_binds or endpoint_slices")
    except BaseException:
        # a session stopped before its end (the timeout) leaves its run, and the kwok controller that outlives it
        if (tmp_path / "run" / "state.json").exists():
            registry.down(tmp_path / "run")
        raise
    assert not (tmp_path / "run" / "state.json").exists(), "the session must take its run and hollow nodes down"
    for name in ("test_pod_startup::test_stateless_pods_start_within_the_slo",
                 "test_load::test_steady_load_meets_the_slos",
                 "test_controllers::test_the_scheduler_binds_the_pods_a_user_asks_for",
                 "test_controllers::test_services_list_their_ready_pods_in_their_endpoint_slices"):
        assert outcomes.get(name) == ("passed", ""), (name, outcomes.get(name))
    assert code == 0, outcomes
    steady = [json.loads(line) for line in next((tmp_path / "histories").glob("*steady_load*.jsonl")).open()]
    totals = {r["total"] for r in steady if r.get("kind") == "event" and r.get("type") == "nodes.ready"}
    assert totals == {20}, totals  # the heartbeats judged were the run's own nodes, every one seen
    left = ha3.api.get(f"/api/v1/nodes?labelSelector={RUN_LABEL}", 10.0).json()["items"]
    assert not left, [n["metadata"]["name"] for n in left]
    kwok = subprocess.run(["pgrep", "-f", f"kwok --config={tmp_path / 'run'}"], capture_output=True, text=True)
    assert kwok.returncode == 1, kwok.stdout


@passes("remote", Selection((BANDWIDTH,), keyword="host_to_host"))
@pytest.mark.alone
def test_the_bandwidth_floor_is_measured_over_ssh_with_the_hosts_own_iperf3(staging, tmp_path):
    """`pytest scenarios/bandwidth --target` on the stand-in, read only: iperf3 as its hosts have it (found on their
    PATH over SSH, never installed by Quorum) measures each link at or over the floor; the scenarios that shape a
    link are destructive and skipped. Alone: a throughput verdict beside another lane's clusters would judge the
    machine."""
    code, outcomes = scenarios_against(staging.write(disposable=False), tmp_path, BANDWIDTH)
    assert code == 0 and outcomes.pop("test_bandwidth::test_host_to_host_bandwidth") == ("passed", ""), outcomes
    assert outcomes and all(outcome == "skipped" and "not disposable" in message
                            for outcome, message in outcomes.values()), outcomes


@fails("remote", Selection((BANDWIDTH,), keyword="host_to_host"), "slow-links")
@pytest.mark.alone
@pytest.mark.deep("re-proves through SSH the floors test_defect_twins.py proves on this twin in CI (the same iperf3 "
                  "runs; this adds a twin build and its stand-in, ~1 min)")
def test_a_twin_with_slow_links_fails_the_bandwidth_floor_through_an_inventory(tmp_path):
    """slow-links reached only by its inventory: the host-to-host floor fails for the twin's stated reason. (Its
    links' shaping is the owner's qdisc on a target, which a limit never replaces: tests/known_gaps.py.)"""
    twin = "slow-links"
    topology = on_a_free_subnet(CLUSTERS / "defects" / f"{twin}.yaml", tmp_path)
    with running(topology, tmp_path / "twin") as cluster, standin(cluster, tmp_path / "standin") as stand_in:
        code, outcomes = scenarios_against(stand_in.write(disposable=True), tmp_path, BANDWIDTH, "-k", "host_to_host")
    (outcome, message), = outcomes.values()
    assert code == 1 and outcome == "failure" and "links below 5.0 Gbit/s" in message, outcomes


def test_the_target_protocol_holds_on_remote(staging, tmp_path):
    """The remote backend's target passes the protocol's conformance checks on the stand-in: read only, every
    fault capability refused by name (tests/protocol_checks.py)."""
    target = registry.get("remote").up(staging.inventory, tmp_path / "run")
    try:
        check_target(target)
        assert (tmp_path / "run" / "kubeconfig").stat().st_mode & 0o077 == 0
    finally:
        target.close()
        registry.down(target.run_dir)
    assert not (tmp_path / "run" / "pki").exists()


@fails("remote", Selection(("scenarios/conformance",), names=frozenset(WEAK_APISERVER)), "weak-apiserver")
@pytest.mark.deep("re-proves through the remote backend the verdicts test_defect_twins.py proves on this twin with "
                  "--topology in CI (the same read-only checks; this adds a twin build and its stand-in, ~2 min)")
def test_a_twin_driven_through_target_fails_exactly_the_checks_it_fails_when_quorum_builds_it(tmp_path):
    twin = "weak-apiserver"
    topology = on_a_spare_subnet(CLUSTERS / "defects" / f"{twin}.yaml", tmp_path)  # another lane builds it too
    with running(topology, tmp_path / "twin") as cluster, standin(cluster, tmp_path / "standin") as stand_in:
        code, outcomes = scenarios_against(stand_in.write(disposable=False), tmp_path, "scenarios/conformance")
    failed = {name.partition("::")[2] for name, (outcome, _) in outcomes.items() if outcome in ("failure", "error")}
    assert code == 1 and failed == WEAK_APISERVER, (code, sorted(failed))


@fails("remote", Selection((KIND_RESTART_NEVER[1],), keyword=KIND_RESTART_NEVER[2]), "kind-restart-never")
@pytest.mark.deep("re-proves through SSH the verdict test_defect_twins.py proves in CI on restart-never (the same "
                  "scenarios); the remote kill and the kubelet's promises are proven in CI on the kubeadm stand-in, ~3 min")
def test_a_kind_twin_driven_through_target_fails_as_it_does_through_the_kind_backend(tmp_path):
    """kind-restart-never reached only by its inventory (kubeadm's static pods, sshd in each node): the scenarios
    that fail on it with --backend kind fail through --target too, for the same stated reason. A target Quorum did
    not build is not rebuilt between scenarios: once a kill has left the component down for good, the scenarios
    after it are skipped as unhealthy, which the gate blocks (harness/gate/evidence.py); none passes."""
    from tests.integration.standin import kind_standin

    twin, suite, select, reason = KIND_RESTART_NEVER
    topology = on_a_spare_subnet(CLUSTERS / "defects" / f"{twin}.yaml", tmp_path)  # another lane builds it too
    with running(topology, tmp_path / "twin", backend="kind") as cluster, \
            kind_standin(cluster, tmp_path / "standin") as stand_in:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", suite, "-k", select, f"--target={stand_in.inventory}",
             f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}", "-p", "no:cacheprovider",
             "-q", "--no-header", "-rs", "--tb=short"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    summary = output.splitlines()[-1]
    assert result.returncode == 1 and " failed" in summary and " passed" not in summary, output[-3000:]
    skips = [line for line in output.splitlines() if line.startswith("SKIPPED")]
    assert all(" is unhealthy" in line for line in skips), output[-3000:]
    assert reason in output, output[-3000:]


@pytest.fixture
def unprivileged_user(staging):
    """A login without root (its password field '*': no password, not locked, which sshd without PAM refuses), with
    the stand-in's client key in its own ~/.ssh/authorized_keys (sshd reads that file as the user)."""
    import shutil

    from harness.toolchain.debian import apt_install

    if shutil.which("sudo") is None:
        apt_install(["sudo"])  # only this test needs sudo here (docs/target.md)
    name = "quorum-nosudo"
    subprocess.run(["userdel", "--remove", name], capture_output=True)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", "--password", "*", name], check=True)
    try:
        home = Path(f"~{name}").expanduser()
        (home / ".ssh").mkdir(mode=0o700)
        (home / ".ssh" / "authorized_keys").write_text(staging.key.with_suffix(".pub").read_text())
        subprocess.run(["chown", "-R", f"{name}:", str(home / ".ssh")], check=True)
        yield name
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


def test_a_user_without_root_or_passwordless_sudo_is_named_with_the_fix(staging, ha3, unprivileged_user, tmp_path):
    ssh = {"user": unprivileged_user, "key_file": str(staging.key), "known_hosts": str(staging.known_hosts)}
    code, output = inventory_check(staging.write(ssh=ssh))
    assert code == 2 and f"{unprivileged_user} is not root" in output and "ssh.sudo: true" in output, output
    code, output = inventory_check(staging.write(ssh={**ssh, "sudo": True}))
    assert code == 2 and f"sudo asks {unprivileged_user} for a password" in output and "NOPASSWD" in output, output
    # a signal that login may not send is an error, never a fault that passes for having acted
    from harness.backends.remote.target import INVENTORY, RemoteTarget
    from harness.remote.ssh import RemoteError

    target, pid = registry.get("remote").up(staging.inventory, tmp_path / "run"), ha3.pid(Component.SCHEDULER, "c1")
    try:
        copy = target.run_dir / INVENTORY
        data = yaml.safe_load(copy.read_text())
        data["ssh"]["user"] = unprivileged_user
        copy.write_text(yaml.safe_dump(data))
        as_user = RemoteTarget(target.run_dir)
        with pytest.raises(RemoteError, match="not permitted"):
            as_user.signal(Component.SCHEDULER, "c1", "SIGSTOP", pid=pid)
        as_user.close()
        assert ha3.process_state("c1", pid) != "T", "the scheduler was stopped"
    finally:
        with contextlib.suppress(ProcessLookupError):  # should the stop have been delivered after all
            os.kill(pid, signal.SIGCONT)
        target.close()
        registry.down(target.run_dir)


def test_faults_over_ssh_act_within_the_inventorys_limits_and_are_refused_outside_them(staging, ha3, tmp_path):
    """On a disposable stand-in whose inventory allows faults on c3 only: a pause of c3's scheduler acts over SSH
    and is healed; a kill on c1 and a partition reaching c1 are refused before anything acts (c1's scheduler keeps
    its pid, nothing is journaled); a second fault at once is refused while the first is active."""
    from harness.errors import FaultError
    from harness.faults import Kill, Nemesis, Pause
    from harness.faults.journal import Journal
    from harness.faults.network import Partition

    inventory = staging.write(disposable=True, limits={"max_faults_at_once": 1, "allowed_hosts": ["c3"]})
    target = registry.get("remote").up(inventory, tmp_path / "run")
    try:
        nemesis = Nemesis(target)
        c1_scheduler = ha3.pid(Component.SCHEDULER, "c1")
        for fault, says in ((Kill(component="kube-scheduler@c1"), "it acts on ['c1']"),
                            (Partition(side_a=["c3"], side_b=["c1"]), "it acts on ['c1']")):
            with pytest.raises(FaultError, match=r"limits\.allowed_hosts") as refused:
                nemesis.inject(fault)
            assert says in refused.value.problem
        assert ha3.pid(Component.SCHEDULER, "c1") == c1_scheduler and Journal(target.run_dir).read() == ([], [])
        with nemesis.fault(Pause(component="kube-scheduler@c3")) as paused:
            assert ha3.process_state("c3", paused.captured["pid"]) == "T"  # as the cluster's own host sees it
            with pytest.raises(FaultError, match="already active"):
                nemesis.inject(Pause(component="kube-scheduler@c3"))
        assert ha3.process_state("c3", paused.captured["pid"]) not in ("T", None)
    finally:
        target.close()
        registry.down(target.run_dir)
