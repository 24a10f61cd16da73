"""A team's own change (harness/change/): its procedure file checked before anything runs, its steps run as real
processes within their budgets (a hung one stopped whole), and the verdicts on what it did."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness.change.procedure import ProcedureError, Step, load_procedure, one_command, parse_procedure
from harness.change.runner import CHANGE_STEP, run_in_host, run_steps
from harness.checkers.change import VERSIONS, change_completed, ends_on_releases, leader_continuity, skew_held
from harness.checkers.verdict import Status
from harness.history import History
from harness.monitors.leases import RENEWED
from harness.target.hosts import Ran
from harness.wait import until


def problem(data: object) -> str:
    with pytest.raises(ProcedureError) as info:
        parse_procedure(data, "change.yaml")
    return info.value.problem


def test_a_procedure_file_is_read_with_its_steps_budget_expectation_and_rollback(tmp_path):
    path = tmp_path / "change.yaml"
    path.write_text("budget_s: 900\nexpect: {kubernetes: v1.35.4}\nsteps:\n"
                    "  - {name: upgrade the first control plane, host: c1, run: [kubeadm, upgrade, apply, -y, v1.35.4],"
                    " budget_s: 600}\n  - {run: [./rest.sh]}\nrollback:\n  - {run: [./downgrade.sh]}\n")
    procedure = load_procedure(path)
    assert [s.title for s in procedure.steps] == ["upgrade the first control plane", "rest.sh"]
    assert procedure.hosts() == {"c1"} and procedure.budget_s == 900 and procedure.expect == {"kubernetes": "v1.35.4"}
    assert one_command(["./up.sh", "--fast"], expect={}, budget_s=60, rollback=["./down.sh"]).rollback[0].run == \
        ["./down.sh"]


def test_a_wrong_procedure_is_refused_naming_the_field_and_the_fix(tmp_path):
    assert "steps" in problem({"steps": []})
    assert "steps.0.host" in problem({"steps": [{"run": ["x"], "host": "c1; reboot"}]})
    assert "steps.0.run" in problem({"steps": [{"run": []}]})
    assert "steps.0.run.0" in problem({"steps": [{"run": ["a\nb"]}]})  # no line break reaches a command
    assert "steps.0.shell" in problem({"steps": [{"run": ["x"], "shell": "rm -rf /"}]})
    assert "v1.35" in problem({"steps": [{"run": ["x"]}], "expect": {"kubernetes": "v1.35"}})
    assert "expect" in problem({"steps": [{"run": ["x"]}], "expect": {"kubelet": "v1.35.4"}})
    assert "budget_s" in problem({"steps": [{"run": ["x"]}], "budget_s": 10 ** 9})
    with pytest.raises(ProcedureError, match="does not exist"):
        load_procedure(tmp_path / "missing.yaml")
    with pytest.raises(ProcedureError, match="cannot be read"):
        load_procedure(tmp_path)
    (tmp_path / "list.yaml").write_text("- run: [x]\n")
    with pytest.raises(ProcedureError, match="list.yaml"):
        load_procedure(tmp_path / "list.yaml")


def run_local(tmp_path: Path, *commands: list[str], budget_s: float = 30.0, step_budget_s: float | None = None):
    history = History()
    steps = [Step(run=argv, budget_s=step_budget_s) for argv in commands]
    outcomes = run_steps(steps, phase="change", budget_s=budget_s, history=history, log_dir=tmp_path / "logs",
                         in_host=None)
    return history, outcomes


def test_steps_run_in_order_until_one_fails_and_their_output_stays_in_a_private_file(tmp_path):
    marker = tmp_path / "second-ran"
    history, outcomes = run_local(tmp_path, ["sh", "-c", "echo the token is s3cret"],
                                  ["sh", "-c", "exit 3"], ["touch", str(marker)])
    assert [o.rc for o in outcomes] == [0, 3] and not marker.exists()  # the third never ran
    log = tmp_path / "logs" / "change-1.log"
    assert log.read_text() == "the token is s3cret\n" and stat.S_IMODE(log.stat().st_mode) == 0o600
    assert "s3cret" not in str([e.attrs for e in history.events])  # the History keeps no output
    verdict = change_completed(history)
    assert verdict.status is Status.FAIL and "step 2/3 'sh' on local exited 3" in verdict.explanation


def running(pid: int) -> bool:
    """Whether the process exists and is not a zombie (an orphan waits there for whoever reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_step_past_its_budget_is_stopped_with_everything_it_started(tmp_path):
    child = tmp_path / "child"
    history, outcomes = run_local(tmp_path, ["sh", "-c", f"sleep 60 & echo $! > {child}; sleep 60"], step_budget_s=1.0)
    assert outcomes[0].timed_out and outcomes[0].rc is None
    verdict = change_completed(history)
    assert verdict.status is Status.FAIL and "was still running when its budget ran out" in verdict.explanation
    pid = int(child.read_text())
    assert until(lambda: not running(pid), 5.0).held, "the step's background sleep outlived it"  # SIGKILL is async


def test_the_change_budget_bounds_every_step_and_a_missing_program_is_named(tmp_path):
    history, outcomes = run_local(tmp_path, ["sleep", "5"], ["true"], budget_s=0.5)
    assert outcomes[0].timed_out and len(outcomes) == 1
    history, outcomes = run_local(tmp_path, ["/nonexistent/upgrade.sh"])
    assert "/nonexistent/upgrade.sh was not found" in outcomes[0].problem
    assert change_completed(history).status is Status.FAIL


def test_a_successful_change_passes_and_an_unrecorded_one_cannot_be_judged(tmp_path):
    history, _ = run_local(tmp_path, ["true"], ["sh", "-c", "exit 0"])
    verdict = change_completed(history)
    assert verdict.passed and verdict.figures["ran"] == 2, verdict.explain()
    assert change_completed(History()).status is Status.UNKNOWN
    assert change_completed(history, phase="rollback").status is Status.UNKNOWN


def test_a_step_inside_a_host_runs_under_the_hosts_timeout_and_its_expiry_is_a_timeout(tmp_path):
    asked = []

    def run(host, argv, timeout):
        asked.append((host, argv, timeout))
        return Ran(tuple(argv), 124, "", "upgrade still waiting\n")

    step = Step(run=["kubeadm", "upgrade", "node"], host="c2", budget_s=90)
    history = History()
    outcomes = run_steps([step], phase="change", budget_s=600, history=history, log_dir=tmp_path, in_host=run_in_host(run))
    assert asked == [("c2", ["timeout", "--kill-after=10s", "90s", "kubeadm", "upgrade", "node"], 130.0)]
    assert outcomes[0].timed_out and (tmp_path / "change-1.log").read_text() == "upgrade still waiting\n"
    nowhere = run_steps([step], phase="change", budget_s=600, history=History(), log_dir=tmp_path, in_host=None)
    assert "runs no command in its hosts" in nowhere[0].problem


def observed(history: History, t: float, down: tuple[str, ...] = (), **components: str) -> None:
    history.event(VERSIONS, t=t, components={k.replace("_", "-").replace("-at-", "@"): v
                                             for k, v in components.items()}, down=list(down))


def test_the_skew_policy_is_judged_at_every_observation_not_only_at_the_end():
    good, bad = History(), History()
    for history, scheduler in ((good, "v1.34.4"), (bad, "v1.35.4")):
        observed(history, 1.0, kube_apiserver_at_c1="v1.34.4", kube_scheduler_at_c1="v1.34.4")
        observed(history, 2.0, kube_apiserver_at_c1="v1.34.4", kube_scheduler_at_c1=scheduler)  # a scheduler first?
        observed(history, 3.0, kube_apiserver_at_c1="v1.35.4", kube_scheduler_at_c1="v1.35.4")
    assert skew_held(good).passed and skew_held(good).figures["observations"] == 3
    verdict = skew_held(bad)
    assert verdict.status is Status.FAIL and "controller-not-newer-than-apiserver" in verdict.explanation
    assert "t=2.00" in verdict.explanation and ends_on_releases(bad, expected={"kubernetes": "v1.35.4"}).passed
    assert skew_held(History()).status is Status.UNKNOWN


def test_the_change_ends_on_the_expected_releases_or_names_each_component_that_does_not():
    history = History()
    observed(history, 1.0, kube_apiserver_at_c1="v1.35.4", kube_apiserver_at_c2="v1.34.4",
             kube_scheduler_at_c1="v1.34.4")
    verdict = ends_on_releases(history, expected={"kubernetes": "v1.35.4", "kube-scheduler": "v1.34.4"})
    assert verdict.status is Status.FAIL and verdict.explanation == \
        "at the end: kube-apiserver@c2 runs v1.34.4, not v1.35.4"
    assert ends_on_releases(History(), expected={"kubernetes": "v1.35.4"}).status is Status.UNKNOWN
    stopped = History()
    observed(stopped, 1.0, down=("kube-apiserver@c2",), kube_apiserver_at_c1="v1.35.4")
    verdict = ends_on_releases(stopped, expected={"kubernetes": "v1.35.4"})
    assert verdict.status is Status.FAIL and "kube-apiserver@c2 ran nothing" in verdict.explanation
    assert CHANGE_STEP not in {e.type for e in history.events}


def test_the_release_watcher_records_what_each_component_runs_and_which_ran_nothing():
    from harness.monitors.versions import ReleaseWatcher
    from harness.toolchain.versions import Version

    class ControlPlane:
        def component_hosts(self, component):
            return ["c1", "c2"]

        def running_version(self, component, host):
            return None if (component, host) == ("kube-apiserver", "c2") else Version.parse("v1.34.4")

        def apiservers_reached(self, component, host):
            return [host] if component == "kube-scheduler" else None  # the schedulers use their own host's

    history = History()
    ReleaseWatcher(ControlPlane(), history).step(0)
    seen = history.events_of(VERSIONS)[0]
    assert seen.get("down") == ["kube-apiserver@c2"] and len(seen.get("components")) == 5
    assert seen.get("talks_to") == {"kube-scheduler@c1": ["c1"], "kube-scheduler@c2": ["c2"]}


def test_a_change_that_says_no_release_it_must_leave_cannot_be_judged_on_its_end():
    history = History()
    observed(history, 1.0, kube_apiserver_at_c1="v1.35.4")
    verdict = ends_on_releases(history, expected={})
    assert verdict.status is Status.UNKNOWN and "--expect" in verdict.explanation


def renewed(history: History, subject: str, *times: float) -> None:
    for t in times:
        history.event(RENEWED, t=t, subject=subject, holder=f"c1_{t}")


def test_leader_continuity_is_the_longest_stretch_without_a_renewal_counted_from_the_changes_edges():
    history = History()
    renewed(history, "kube-scheduler", 12.0, 14.0, 30.5, 32.5, 60.0)  # a restarted leader: 16.5 s without one
    renewed(history, "kube-controller-manager", *range(11, 60, 2))
    slow = leader_continuity(history, subject="kube-scheduler", since=10.0, until=40.0, max_s=15.0)
    assert slow.status is Status.FAIL and slow.figures["longest_s"] == 16.5 and slow.figures["at"] == 14.0
    assert "16.5" in slow.explanation and "from t=14.00" in slow.explanation
    steady = leader_continuity(history, subject="kube-controller-manager", since=10.0, until=40.0, max_s=15.0)
    assert steady.passed and steady.figures["longest_s"] == 2.0 and steady.figures["renewals"] == 15
    tail = leader_continuity(history, subject="kube-scheduler", since=10.0, until=50.0, max_s=15.0)
    assert tail.status is Status.FAIL and tail.figures["longest_s"] == 17.5  # from the last renewal to the end
    blind = leader_continuity(History(), subject="kube-scheduler", since=10.0, until=40.0, max_s=15.0)
    assert blind.status is Status.FAIL and blind.figures["longest_s"] is None
    short = leader_continuity(History(), subject="kube-scheduler", since=10.0, until=12.0, max_s=15.0)
    assert short.status is Status.UNKNOWN  # too short a change to have seen a renewal: nothing to judge


def test_the_lease_watcher_records_a_renewal_only_when_a_leases_renew_time_changed():
    """The first look at a lease shows a renewal of any age: only a change after it is one made while watching."""
    from harness.monitors.leases import LeaderWatcher

    answers = iter([{"renewTime": "t1", "holderIdentity": "c1_a"}, {"renewTime": "t1", "holderIdentity": "c1_a"},
                    {"renewTime": "t2", "holderIdentity": "c1_a"}, {"renewTime": "t3", "holderIdentity": "c2_b"}])

    class Response:
        status_code = 200

        def __init__(self, spec):
            self.spec = spec

        def json(self):
            return {"items": [{"metadata": {"name": "kube-scheduler"}, "spec": self.spec}]}

    class Client:
        def get(self, path, timeout):
            try:
                return Response(next(answers))
            except StopIteration:
                watcher._stop.set()
                return Response({"renewTime": "t3", "holderIdentity": "c2_b"})

    class Health:
        @staticmethod
        def lease_host(identity):
            return identity.partition("_")[0]

    class Cluster:
        etcd_urls = []
        health = Health()

        def lease_clients(self):
            return [Client()]

    history = History()
    watcher = LeaderWatcher(Cluster(), history, period=0.0)
    watcher._poll_leases()
    assert [e.get("holder") for e in history.events_of(RENEWED, subject="kube-scheduler")] == ["c1_a", "c2_b"]


def test_expected_releases_are_read_from_the_command_line_or_refused_with_an_example():
    import click

    from harness.change.cli import expectations

    assert expectations(("kubernetes=v1.35.4", "kube-scheduler=v1.34.4")) == {
        "kubernetes": "v1.35.4", "kube-scheduler": "v1.34.4"}
    with pytest.raises(click.UsageError, match="--expect kubernetes=v1.35.4"):
        expectations(("v1.35.4",))


@pytest.mark.parametrize("arguments, says", [
    (["install", "kube-apiserver", "v1.35.4"], "is not COMPONENT@HOST; e.g. kube-apiserver@c1"),
    (["install", "kube-apiserver@c1", "1.35"], "fix:"),
    (["change", "--expect=v1.35.4", "--", "./up.sh"], "--expect kubernetes=v1.35.4"),
    (["change", "--procedure=x.yaml", "--", "./up.sh"], "one of them"),
    (["change", "--target=inv.yaml", "--backend=kind", "--", "./up.sh"], "not both"),
])
def test_quorum_install_and_change_refuse_bad_input_before_touching_a_cluster(tmp_path, arguments, says):
    """What is wrong and how to fix it, with no traceback, before any cluster is opened (none runs here)."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "harness.cli", *arguments], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[2], timeout=60,
                            env={**os.environ, "QUORUM_CLUSTER": str(tmp_path / "no-such-run")})
    assert result.returncode == 2 and says in result.stderr, result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_faults_during_a_change_are_injected_at_their_time_and_one_due_after_it_is_not_judged_as_passed():
    """A leader kill due after 0.2 s happens while the change runs; one due after 30 s never does, since the change
    ends first: faults-happened is unknown for it, never a pass."""
    from harness.change.beside import FaultsDuringChange
    from harness.change.procedure import LeaderKill
    from harness.checkers.change import faults_happened

    class Nemesis:
        def __init__(self):
            self.injected = []

        def inject(self, fault):
            self.injected.append(fault.component)
            history.event("fault.start", id=str(len(self.injected)), name=fault.name, params={})
            return fault

    class Leases:
        def holder(self, subject):
            return "c2"

    from harness.history import now

    history, nemesis, started = History(), Nemesis(), now()
    faults = FaultsDuringChange(nemesis, Leases(), history, [LeaderKill(kill_leader="kube-scheduler", after_s=0.2)])
    faults.start()
    assert until(lambda: nemesis.injected, 5.0).held
    faults.stop()
    assert nemesis.injected == ["kube-scheduler@c2"]
    assert faults_happened(history, planned=["kill"], since=started, until=now()).passed
    late = FaultsDuringChange(nemesis, Leases(), History(), [LeaderKill(kill_leader="kube-scheduler", after_s=30)])
    late.start()
    late.stop()
    verdict = faults_happened(History(), planned=["kill"], since=started, until=now())
    assert verdict.status is Status.UNKNOWN and "0 of the 1 faults" in verdict.explanation
    assert nemesis.injected == ["kube-scheduler@c2"]  # the late one was cancelled, not fired


def test_a_fault_that_finds_no_leader_to_kill_is_recorded_as_missed_and_leaves_the_change_unjudged():
    from harness.change.beside import FaultsDuringChange
    from harness.change.procedure import LeaderKill
    from harness.checkers.change import faults_happened
    from harness.errors import FaultError
    from harness.history import now

    class Leases:
        def holder(self, subject):
            raise FaultError("no kube-scheduler holder was observed within 10 s")

    history, started = History(), now()
    FaultsDuringChange(None, Leases(), history, [LeaderKill(kill_leader="kube-scheduler", after_s=30)])._inject(
        LeaderKill(kill_leader="kube-scheduler", after_s=30))
    verdict = faults_happened(history, planned=["kill"], since=started, until=now())
    assert verdict.status is Status.UNKNOWN and "no kube-scheduler holder was observed" in verdict.explanation


def test_leader_kills_are_read_from_the_command_line_and_checked_by_the_procedure():
    import click

    from harness.change.cli import leader_kills

    assert leader_kills(("kube-controller-manager:30",)) == [{"kill_leader": "kube-controller-manager", "after_s": 30.0}]
    with pytest.raises(click.UsageError, match="LEASE:SECONDS"):
        leader_kills(("kube-controller-manager",))
    assert "faults.0.kill_leader" in problem({"steps": [{"run": ["x"]}], "faults": [{"kill_leader": "etcd", "after_s": 5}]})
    assert "faults.0.after_s" in problem({"steps": [{"run": ["x"]}],
                                          "faults": [{"kill_leader": "kube-scheduler", "after_s": 0}]})


def test_whom_a_controller_talks_to_is_read_from_the_kubeconfig_its_live_command_line_names():
    """kubeadm's controller-manager.conf names its node's own address; a load balancer's endpoint means every
    apiserver (None), and so does a kubeconfig that cannot be read."""
    from harness.target.releases import ComponentReleases

    kubeconfig = "apiVersion: v1\nclusters:\n- cluster:\n    server: https://{}:6443\n  name: kubernetes\n"
    files = {"/etc/kubernetes/controller-manager.conf": kubeconfig.format("10.0.0.2"),
             "/etc/kubernetes/scheduler.conf": kubeconfig.format("127.0.0.1"),
             "/run/lb.conf": kubeconfig.format("10.0.0.9")}

    class Node(ComponentReleases):
        def __init__(self, config: str | None) -> None:
            self.config = config

        def pid(self, component, host):
            return 42

        def address(self, host):
            return "10.0.0.2"

        def exec(self, host, argv, check=True, timeout=60.0):
            if argv[0] == "cat" and argv[1] == "/proc/42/cmdline":
                return "\0".join(["kube-controller-manager", "--leader-elect=true"] +
                                 ([f"--kubeconfig={self.config}"] if self.config else []))
            return files.get(argv[1], "cat: no such file")

    assert Node("/etc/kubernetes/controller-manager.conf").apiservers_reached("kube-controller-manager", "c1") == ["c1"]
    assert Node("/etc/kubernetes/scheduler.conf").apiservers_reached("kube-scheduler", "c1") == ["c1"]
    assert Node("/run/lb.conf").apiservers_reached("kube-controller-manager", "c1") is None
    assert Node("/gone.conf").apiservers_reached("kube-controller-manager", "c1") is None
    assert Node(None).apiservers_reached("kube-controller-manager", "c1") is None


def test_the_changes_scenario_may_run_through_the_change_and_its_rollback_each_at_its_whole_budget():
    """A change and its rollback may each take the procedure's whole budget: the scenario's timeout covers both and a
    margin, past pytest's default 900 s, so a long change is judged instead of cut off."""
    from harness.change.cli import SCENARIO_MARGIN_S, scenario_timeout_s

    short = one_command(["true"], expect={}, budget_s=60.0)
    long = one_command(["true"], expect={}, budget_s=1200.0, rollback=["true"])
    assert scenario_timeout_s(short) == 120 + SCENARIO_MARGIN_S
    assert scenario_timeout_s(long) == 2400 + SCENARIO_MARGIN_S > 900
