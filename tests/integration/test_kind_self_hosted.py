"""A self-hosted control plane on kind (clusters/kind-self-hosted-1.yaml, issue #23): kubeadm's static pods bootstrap
it, then `quorum up` pivots kube-apiserver to a DaemonSet and the controller-manager and scheduler to Deployments
(harness/backends/kind/self_hosted.py). What the checkpointer scenarios stand on: only etcd is left a static pod,
the self-hosted pods hold the leases, the kind target finds and signals them, and the kubelet restarts a killed
self-hosted apiserver; holds and flag overrides, which rewrite static manifests, are refused by name. The pod
checkpointer keeps its own checkpoint active and the apiserver's saved; the checkpointer suite (a power loss, the
checkpointer killed while the API is down, a bad flag rolled out to the apiservers, an upgrade then a power loss, a
checkpointed secret changed) and the self-hosted conformance checks pass on this cluster. Then it is turned into
each twin in turn, and the same scenarios and checks fail for each twin's reason: its apiserver updated in place with
no PodDisruptionBudget (kind-apiserver-in-place), a checkpointer that never collects (kind-stale-checkpoints), one that
never refreshes a secret (kind-stale-secrets), one whose lock outlives it (kind-checkpointer-stale-lock), then its
checkpointer removed (kind-no-checkpointer). CI builds one self-hosted cluster for all of it; test_defect_twins.py re-proves each twin on its own build, nightly."""

import re
import subprocess
import sys
import time

import pytest

from harness.backends.kind.checkpointer import checkpoints
from harness.backends.kind.self_hosted import BOOTSTRAP, CHECKPOINT, SELF_HOSTED, ready_nodes
from harness.backends.kind.static_pods import MANIFESTS
from harness.errors import FaultRefused
from harness.faults import Kill, ModifyFlags, Nemesis
from harness.history import History
from harness.run import owner
from harness.target.protocol import HostRole
from harness.wait import eventually
from tests.integration.conftest import CLUSTERS, ROOT, on_a_free_subnet, running
from tests.tiers import Selection, fails, passes

TOPOLOGY = CLUSTERS / "kind-self-hosted-1.yaml"
CHECKPOINTER = "scenarios/checkpointer"
SELF_HOSTED_CHECKS = "scenarios/conformance/test_self_hosted.py"
POWER_LOSS = f"{CHECKPOINTER}/test_checkpointer.py::test_every_control_plane_node_loses_power_and_the_api_comes_back_from_its_checkpoints"
# presubmit builds this cluster for the checkpointer's smoke: its mechanism (a power loss) and the twin that fails it
# (no checkpointer), besides the cheap checks; the rest of the suite and the other twins run in the deep tier
TWIN_ON_THIS_CLUSTER = ("presubmit proves the checkpointer's verdicts can fail on this cluster with no checkpointer; "
                        "this proves another twin's reason on it")


@pytest.fixture(scope="module")
def self_hosted(tmp_path_factory):
    base = tmp_path_factory.mktemp("self-hosted")
    with running(on_a_free_subnet(TOPOLOGY, base), base / "run", backend="kind") as cluster:
        yield cluster


def test_the_control_plane_is_a_daemonset_and_deployments_and_only_etcd_stays_a_static_pod(self_hosted):
    node = self_hosted.hosts("controller")[0]
    # beside etcd, only checkpoints: the checkpointer's own, always active
    files = checkpoints(self_hosted, node)
    assert set(self_hosted.exec(node, ["ls", MANIFESTS]).split()) == {"etcd.yaml", *files["active"]}
    assert [n for n in files["active"] if not n.startswith("kube-system-quorum-checkpointer-")] == [], files
    assert sum(n.startswith("kube-system-kube-apiserver-") for n in files["inactive"]) == 1, files
    assert sorted(self_hosted.exec(node, ["ls", BOOTSTRAP]).split()) == [f"{c}.yaml" for c in SELF_HOSTED]
    for component in SELF_HOSTED:
        assert ready_nodes(self_hosted, component) == {self_hosted.container(node)}, component
    daemonset = self_hosted.api.request("GET", "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-apiserver").json()
    assert daemonset["spec"]["template"]["metadata"]["annotations"] == {CHECKPOINT: "true"}
    # a new apiserver starts beside the old one, and no eviction takes the last one
    assert daemonset["spec"]["updateStrategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}
    budget = self_hosted.api.request("GET", "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets/kube-apiserver")
    assert budget.status_code == 200 and budget.json()["spec"]["minAvailable"] == 1, budget.text[:300]
    flags = self_hosted.live_flags("kube-apiserver")[node]
    assert flags["--advertise-address"] == self_hosted.address(node) and flags["--permit-port-sharing"] == "true"
    # the leases are held by the self-hosted pods (the static ones, which held them first, are gone)
    assert set(self_hosted.health.lease_holders()) == {"kube-controller-manager", "kube-scheduler"}
    assert self_hosted.health.problems() == []


@pytest.mark.deep("the static-pod suite proves in presubmit that a kind node's kubelet restarts a killed apiserver; "
                  "this proves it for the DaemonSet's pod (~1 min)")
def test_the_kubelet_restarts_a_killed_self_hosted_apiserver_and_the_api_answers_again(self_hosted):
    node = self_hosted.hosts("controller")[0]
    before, restarts = self_hosted.pid("kube-apiserver", node), self_hosted.restarts("kube-apiserver", node)
    with Nemesis(self_hosted, History()).fault(Kill(component=f"kube-apiserver@{node}")):
        pass
    budget = self_hosted.restart_budget_s("kube-apiserver", earlier_restarts=restarts)
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline and not (self_hosted.health.component_healthy("kube-apiserver", node)
                                               and self_hosted.pid("kube-apiserver", node) not in (None, before)):
        time.sleep(1)
    assert self_hosted.pid("kube-apiserver", node) not in (None, before), f"no new kube-apiserver within {budget:.0f}s"
    assert self_hosted.health.component_healthy("kube-apiserver", node) and self_hosted.api.ready()
    # the DaemonSet's pod, restarted in place (its status reaches the API once the API is back); on one control
    # plane the controller-manager and the scheduler lose their leases meanwhile and restart too: then all is well
    assert eventually(lambda: self_hosted.restarts("kube-apiserver", node) == restarts + 1, 30, 1.0), \
        self_hosted.restarts("kube-apiserver", node)
    assert eventually(lambda: self_hosted.health.problems() == [], 120, 2.0), self_hosted.health.problems()


def test_holding_or_rewriting_the_flags_of_a_self_hosted_component_is_refused_by_name(self_hosted):
    node = self_hosted.hosts("controller")[0]
    with pytest.raises(FaultRefused, match="self-hosted control plane: it is a DaemonSet pod"):
        with Nemesis(self_hosted, History()).fault(ModifyFlags(component=f"kube-apiserver@{node}", add={"--v": "2"})):
            pass
    with pytest.raises(FaultRefused, match="it is a Deployment pod"):
        self_hosted.hold("kube-scheduler", node)
    assert self_hosted.health.problems() == []


def _checkpointer_suite(cluster, histories, *selection: str) -> tuple[int, str]:
    """`pytest scenarios/checkpointer` on this cluster (--keep-cluster), as a user would run it; exit code, output."""
    owner.release(cluster.run_dir)  # the suite's session claims the cluster while it runs
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", *selection, "--backend=kind",
             f"--topology={cluster.run_dir / 'topology.yaml'}", "--keep-cluster", f"--run-dir={cluster.run_dir}",
             f"--history-dir={histories}", "-p", "no:cacheprovider", "-q", "--no-header", "-rA", "--tb=short"],
            cwd=ROOT, capture_output=True, text=True, timeout=900)
    finally:
        owner.claim(cluster.run_dir)
    return result.returncode, result.stdout + result.stderr


def _failure_evidence(cluster, histories, kept) -> str:
    """What explains a failed run of the suite, where a failure message shows it: the lanes' temporary directory
    (and the cluster) are removed after the tests, so the suite's Histories are copied to `kept`, and the message
    gets the fault's and the checkpointer's events in order and the end of each control-plane node's checkpointer
    and kubelet logs (docs/checkpointer.md: the slow hand-back after a power loss)."""
    import json
    import shutil

    if histories.exists():  # a suite that failed before collecting wrote none: the message still gets the logs
        shutil.copytree(histories, kept, dirs_exist_ok=True)
    events = []
    for path in sorted(kept.rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line) if line.startswith("{") else {}
            if record.get("kind") == "event" and record.get("type", "").startswith(("fault.", "checkpointer.")):
                events.append((record["t"], record["type"], {k: v for k, v in record.items()
                                                            if k not in ("kind", "t", "type")}))
    start = events[0][0] if events else 0.0
    lines = [f"the suite's Histories: {kept}", "events (s after the first):"]
    lines += [f"  {t - start:8.2f} {kind} {json.dumps(attrs)[:160]}" for t, kind, attrs in sorted(events)]
    for node in cluster.hosts(HostRole.CONTROLLER):
        checkpointer = cluster.exec(node, ["sh", "-c", "ls -t /var/log/pods/kube-system_quorum-checkpointer*/*/*.log "
                                           "2>/dev/null | head -n 2 | xargs -r tail -n 15"], check=False)
        kubelet = cluster.exec(node, ["sh", "-c", "journalctl -u kubelet --no-pager -n 2000 | grep -iE "
                                      "'checkpoint|kube-apiserver' | tail -n 15"], check=False)
        lines += [f"{node}: checkpointer log", checkpointer.rstrip(), f"{node}: kubelet journal", kubelet.rstrip()]
    return "\n".join(lines)[-6000:]


def _reason(twin: str) -> str:
    from tests.integration.test_defect_twins import CASES

    return next(reason for name, _, _, reason in CASES if name == twin)


def _defects(twin: str):
    """What the twin's own file plants (clusters/defects/<twin>.yaml): this cluster is given those defects to prove the
    twin, with the functions its build applies them with, so the file is what is proven (it is not built alone)."""
    from harness.backends.kind.topology import load_kind_topology

    return load_kind_topology(CLUSTERS / "defects" / f"{twin}.yaml").defects


@passes("kind", Selection((POWER_LOSS,)))
def test_the_api_comes_back_from_its_checkpoints_after_every_control_plane_node_loses_power(self_hosted, tmp_path):
    """The checkpointer's mechanism, presubmit's smoke of this module: after a power loss of every node, the API
    comes back from the apiserver's checkpoint and the checkpoint is handed back to the DaemonSet's pod."""
    code, output = _checkpointer_suite(self_hosted, tmp_path / "histories", POWER_LOSS)
    passed = code == 0 and "1 passed" in output.splitlines()[-1]
    assert passed, output[-3000:] + "\n" + _failure_evidence(self_hosted, tmp_path / "histories",
                                                              ROOT / "reports" / "evidence" / "checkpointer-power-loss")
    histories = "".join(path.read_text() for path in (tmp_path / "histories").rglob("*.jsonl"))
    assert "checkpointer.api-ready" in histories and "checkpointer.handed-back" in histories


THE_REST_OF_THE_SUITE = Selection((CHECKPOINTER,), deselect=(POWER_LOSS,))


@passes("kind", THE_REST_OF_THE_SUITE)
@pytest.mark.deep("presubmit proves the checkpointer's mechanism on this cluster (the power loss) and that its verdict "
                  "fails without a checkpointer; this runs the suite's four other scenarios on it (~4 min)")
def test_the_checkpointer_suite_passes_a_killed_checkpointer_a_bad_apiserver_update_an_upgrade_then_a_power_loss_and_a_changed_secret(
        self_hosted, tmp_path):
    code, output = _checkpointer_suite(self_hosted, tmp_path / "histories", *THE_REST_OF_THE_SUITE.pytest_args())
    assert code == 0 and "4 passed" in output.splitlines()[-1], output[-4000:]
    histories = "".join(path.read_text() for path in (tmp_path / "histories").rglob("*.jsonl"))
    assert re.search(r'"killed": "\{\'[a-z0-9-]+\': \[\'[0-9a-f]{64}\'\]', histories)  # the checkpointer, killed
    assert "checkpointer.secret-refreshed" in histories
    assert "rollout.failing" in histories and "rollout.restored" in histories and "rollout.done" in histories


@passes("kind", Selection((SELF_HOSTED_CHECKS,)))
def test_the_self_hosted_conformance_checks_pass(self_hosted, tmp_path):
    code, output = _checkpointer_suite(self_hosted, tmp_path / "histories", "scenarios/conformance/test_self_hosted.py")
    assert code == 0 and "3 passed" in output.splitlines()[-1], output[-4000:]


@fails("kind", Selection((f"{CHECKPOINTER}/test_self_hosted_update.py",)), "kind-apiserver-in-place")
@fails("kind", Selection((SELF_HOSTED_CHECKS,), keyword="new_pod_beside_the_old"), "kind-apiserver-in-place")
@pytest.mark.deep(f"{TWIN_ON_THIS_CLUSTER} (~2 min)")
def test_the_same_cluster_updating_its_apiserver_in_place_loses_the_api_to_a_bad_flag(self_hosted, tmp_path):
    """The twin kind-apiserver-in-place on this cluster: its DaemonSet's update turned into the twin's (the old pod
    stopped first) and its PodDisruptionBudget deleted, the update scenario fails for the twin's reason; its heal
    repairs the DaemonSet (through the bootstrap apiserver when the API is gone)."""
    from harness.backends.kind.self_hosted import create, disruption_budget, update_strategy

    api = self_hosted.api

    def update_in_place(yes: bool) -> None:
        strategy = {"spec": {"updateStrategy": update_strategy(in_place=yes)}}
        assert api.request("PATCH", "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-apiserver", strategy,
                           content_type="application/merge-patch+json").status_code == 200

    # the twin's build updates its DaemonSet in place and, so, creates no PodDisruptionBudget (self_hosted.pivot)
    assert _defects("kind-apiserver-in-place").apiserver_updated_in_place
    update_in_place(True)
    try:
        assert api.request("DELETE", "/apis/policy/v1/namespaces/kube-system/poddisruptionbudgets/kube-apiserver"
                           ).status_code == 200
        code, output = _checkpointer_suite(self_hosted, tmp_path / "histories",
                                           "scenarios/checkpointer/test_self_hosted_update.py")
        assert code == 1 and " failed" in output.splitlines()[-1], output[-4000:]
        assert _reason("kind-apiserver-in-place") in output, output[-4000:]
        assert eventually(lambda: self_hosted.api.ready(), 60, 2.0)
        # and the conformance check that names the defect fails, only that one
        code, output = _checkpointer_suite(self_hosted, tmp_path / "conformance", "scenarios/conformance/test_self_hosted.py")
        assert code == 1 and "1 failed, 2 passed" in output.splitlines()[-1], output[-4000:]
        assert "DaemonSet stops an apiserver before its successor is Ready" in output, output[-4000:]
    finally:  # the reference again, for the last twin's checks, whatever failed above
        update_in_place(False)
        create(self_hosted, disruption_budget(1))


@fails("kind", Selection((f"{CHECKPOINTER}/test_upgrade_then_power_loss.py",)), "kind-stale-checkpoints")
@pytest.mark.deep(f"{TWIN_ON_THIS_CLUSTER} (~2 min)")
def test_the_same_cluster_with_a_checkpointer_that_never_collects_runs_the_old_apiserver_after_an_upgrade_and_a_reboot(
        self_hosted, tmp_path):
    """The twin kind-stale-checkpoints on this cluster: its checkpointer rolled out with --never-collect,
    the upgrade-then-power-loss scenario fails for the twin's reason (the old version's checkpoint runs again)."""
    from harness.backends.kind.checkpointer import defect_args, roll_out_args

    args = defect_args(_defects("kind-stale-checkpoints"))  # as its build rolls the checkpointer out
    assert args == ["--never-collect"], args
    roll_out_args(self_hosted, args)
    code, output = _checkpointer_suite(self_hosted, tmp_path / "histories",
                                       "scenarios/checkpointer/test_upgrade_then_power_loss.py")
    assert code == 1 and " failed" in output.splitlines()[-1], output[-4000:]
    assert _reason("kind-stale-checkpoints") in output, output[-4000:]


@fails("kind", Selection((f"{CHECKPOINTER}/test_secret_refresh.py",)), "kind-stale-secrets")
@pytest.mark.deep(f"{TWIN_ON_THIS_CLUSTER} (~1 min)")
def test_the_same_cluster_with_a_checkpointer_that_never_refreshes_keeps_a_changed_secrets_old_copy(self_hosted, tmp_path):
    """The twin kind-stale-secrets on this cluster: its checkpointer rolled out with --never-refresh,
    the secret-refresh scenario fails for the twin's reason (the node's copy keeps the old value)."""
    from harness.backends.kind.checkpointer import defect_args, roll_out_args

    args = defect_args(_defects("kind-stale-secrets"))  # as its build rolls the checkpointer out
    assert args == ["--never-refresh"], args
    roll_out_args(self_hosted, args)
    code, output = _checkpointer_suite(self_hosted, tmp_path / "histories",
                                       "scenarios/checkpointer/test_secret_refresh.py")
    assert code == 1 and " failed" in output.splitlines()[-1], output[-4000:]
    assert _reason("kind-stale-secrets") in output, output[-4000:]


@fails("kind", Selection((f"{CHECKPOINTER}/test_checkpointer.py",), keyword="killed_while"),
       "kind-checkpointer-stale-lock")
@pytest.mark.deep(f"{TWIN_ON_THIS_CLUSTER} (~3 min)")
def test_the_same_cluster_with_a_checkpointer_whose_lock_outlives_it_is_never_handed_back_after_it_is_killed(
        self_hosted, tmp_path):
    """The twin kind-checkpointer-stale-lock on this cluster: its checkpointer rolled out with --presence-lock, the
    scenario that kills it while the API is down fails for the twin's reason (the restarted checkpointer waits for
    its dead predecessor's lock, so the apiserver's checkpoint is never handed back). Before the last twin, which
    takes every checkpoint away."""
    from harness.backends.kind.checkpointer import defect_args, roll_out_args
    from harness.clients.checkpoints import view

    args = defect_args(_defects("kind-checkpointer-stale-lock"))  # as its build rolls the checkpointer out
    assert args == ["--presence-lock"], args
    roll_out_args(self_hosted, args)
    try:
        code, output = _checkpointer_suite(self_hosted, tmp_path / "histories",
                                           "scenarios/checkpointer/test_checkpointer.py::"
                                           "test_the_checkpointer_killed_while_the_api_is_down_still_brings_it_back")
        assert code == 1 and " failed" in output.splitlines()[-1], output[-4000:]
        assert _reason("kind-checkpointer-stale-lock") in output, output[-4000:]
    finally:  # a sound checkpointer again, which hands the apiserver's checkpoint back (the last twin starts from that)
        roll_out_args(self_hosted, [])
        assert eventually(lambda: (seen := view(self_hosted.api)) is not None and seen.taken_over(1), 120, 2.0), \
            view(self_hosted.api)


@fails("kind", Selection((f"{CHECKPOINTER}/test_checkpointer.py",), keyword="loses_power"), "kind-no-checkpointer")
@fails("kind", Selection((SELF_HOSTED_CHECKS,), keyword="checkpointer_runs"), "kind-no-checkpointer")
def test_the_same_cluster_without_its_checkpointer_never_gets_its_api_back_after_a_power_loss(self_hosted, tmp_path):
    """The twin's proof on this cluster (last: it leaves no API): the checkpointer and every checkpoint removed,
    the same scenario fails for the twin's reason (the defect clusters/defects/kind-no-checkpointer.yaml plants)."""
    from harness.backends.kind.checkpointer import remove

    assert _defects("kind-no-checkpointer").no_checkpointer  # its build installs no checkpointer
    remove(self_hosted)
    code, output = _checkpointer_suite(self_hosted, tmp_path / "conformance", "scenarios/conformance/test_self_hosted.py")
    assert code == 1 and "1 failed, 2 passed" in output.splitlines()[-1], output[-4000:]
    assert "control-plane nodes without a running pod checkpointer" in output, output[-4000:]
    # the power loss alone: with no API after it, the next scenario would only wait out its own start (~150 s in CI)
    code, output = _checkpointer_suite(self_hosted, tmp_path / "histories", "scenarios/checkpointer/test_checkpointer.py::"
                                       "test_every_control_plane_node_loses_power_and_the_api_comes_back_from_its_checkpoints")
    assert code == 1 and " failed" in output.splitlines()[-1], output[-4000:]
    assert _reason("kind-no-checkpointer") in output, output[-4000:]
