"""`quorum change` (a team's procedure run and judged as a scenario, docs/lifecycle.md "Your own procedure") and
`quorum install` (the package manager of the hosts Quorum builds, which such a procedure calls on them)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
import yaml

from harness.errors import QuorumError

if TYPE_CHECKING:
    from harness.change.procedure import Procedure

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "scenarios/change/test_change.py"


@click.command("install")
@click.argument("component_at_host", metavar="COMPONENT@HOST")
@click.argument("release")
@click.option("--cluster", envvar="QUORUM_CLUSTER", default=None,
              help="the cluster's name or run directory (a step of `quorum change` is given QUORUM_CLUSTER)")
@click.option("--wait/--no-wait", default=True, show_default=True,
              help="until the component answers on RELEASE (an apiserver ready, the others healthy)")
def install(component_at_host: str, release: str, cluster: str | None, wait: bool) -> None:
    """Install RELEASE of a control-plane component on one host of a process or docker cluster and restart it there,
    as a package upgrade does on a host (e.g. `quorum install kube-apiserver@c1 v1.35.4`). It is configuration, not
    a fault: it stays until the next install. No skew or order is checked: judge your procedure with `quorum
    change`."""
    from harness.backends import registry
    from harness.backends.common import find_run
    from harness.scenario.rollout import component_ready
    from harness.toolchain.versions import kubernetes_version
    from harness.wait import until

    component, _, host = component_at_host.partition("@")
    if not component or not host:
        raise click.UsageError(f"{component_at_host!r} is not COMPONENT@HOST; e.g. kube-apiserver@c1")
    wanted = kubernetes_version(release)
    target = registry.open_target(find_run(cluster))
    binary = target.install_release(component, host, wanted)
    click.echo(f"{component}@{host}: {wanted} installed ({binary}), restarted")
    if not wait:
        return
    budget_s = target.restart_budget_s(component)
    waited = until(lambda: component_ready(target, component_at_host)
                   and target.running_version(component, host) == wanted, budget_s, 0.5)
    if not waited.held:
        raise QuorumError(f"{component}@{host} did not answer on {wanted} within {budget_s:.0f} s (its restart "
                          "budget)", f"read its log: quorum logs {component}@{host}")
    click.echo(f"{component}@{host}: answering on {wanted} after {waited.after_s:.1f} s")


def expectations(values: tuple[str, ...]) -> dict[str, str]:
    """`--expect kubernetes=v1.35.4 --expect kube-scheduler=v1.35.4` as the procedure's `expect`."""
    expected = {}
    for value in values:
        what, sep, release = value.partition("=")
        if not sep or not what or not release:
            raise click.UsageError(f"--expect {value!r} is not WHAT=RELEASE; e.g. --expect kubernetes=v1.35.4")
        expected[what] = release
    return expected


@click.command("change")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--procedure", "procedure_file", type=click.Path(dir_okay=False, path_type=Path),
              help="a procedure file (steps, expect, budget, rollback) instead of COMMAND")
@click.option("--expect", "expect", multiple=True, metavar="WHAT=RELEASE",
              help="a release the change must leave: kubernetes=v1.35.4 (every control-plane component), or one "
                   "component's, e.g. kube-scheduler=v1.35.4")
@click.option("--budget", "budget_s", type=float, default=1800.0, show_default=True,
              help="seconds the whole change may take")
@click.option("--rollback", default=None, metavar="CMD", help="a command run when a verdict on the change fails "
              "(split as a shell would, never run by one); the rollback is judged the same way")
@click.option("--load", is_flag=True, help="the profile's steady API load beside the change")
@click.option("--kill-leader", "kills", multiple=True, metavar="LEASE:SECONDS",
              help="kill the leader of LEASE (kube-controller-manager or kube-scheduler) SECONDS into the change, "
                   "e.g. kube-controller-manager:30")
@click.option("--target", "inventory", type=click.Path(dir_okay=False, path_type=Path),
              help="a cluster Quorum did not build, by its inventory (it must say disposable: true)")
@click.option("--topology", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="a topology Quorum builds (or reuses with --keep-cluster)")
@click.option("--backend", default=None, help="the backend that builds --topology")
@click.option("--keep-cluster", is_flag=True, help="reuse a healthy cluster an earlier session left, and leave it")
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--history-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--change-logs", "logs_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="where the steps' output goes (default ~/.cache/quorum/change-logs/<the history's name>)")
def change(command: tuple[str, ...], procedure_file: Path | None, expect: tuple[str, ...], budget_s: float,
           rollback: str | None, load: bool, kills: tuple[str, ...], inventory: Path | None, topology: Path | None,
           backend: str | None, keep_cluster: bool, run_dir: Path | None, history_dir: Path | None,
           logs_dir: Path | None) -> None:
    """Run your change (COMMAND after `--`, or --procedure FILE) on a cluster while clients read and write through it
    and its leases and releases are watched, and judge it: availability, lost writes, leader continuity, the version
    skew policy at every observation, the releases it ends on and its budget (docs/lifecycle.md). E.g.
    `quorum change --target inv.yaml --expect kubernetes=v1.35.4 -- ./upgrade.sh`. Exit 0: every verdict passed;
    1: one failed; 3: nothing was judged (the scenario was skipped, or pytest could not run it)."""
    import shlex

    from harness.change.procedure import load_procedure, one_command
    from harness.change.runner import default_logs

    if bool(command) == bool(procedure_file):
        raise click.UsageError("give the change as COMMAND after `--`, or as --procedure FILE (one of them)")
    if inventory is not None and (topology is not None or backend is not None):
        raise click.UsageError("give --target INVENTORY, or --topology/--backend, not both")
    if procedure_file is not None:
        if expect or rollback or load or kills:
            raise click.UsageError("--expect, --rollback, --load and --kill-leader belong in the procedure file when "
                                   "you give one (expect, rollback, load, faults)")
        procedure = load_procedure(procedure_file)
    else:
        try:
            undo = shlex.split(rollback) if rollback else None
        except ValueError as error:
            raise click.UsageError(f"--rollback {rollback!r}: {error}") from None
        procedure = one_command(list(command), expect=expectations(expect), budget_s=budget_s, rollback=undo,
                                load=load, faults=leader_kills(kills))
    options = [f"--target={inventory}"] if inventory else []
    options += [f"--topology={topology}"] if topology else []
    options += [f"--backend={backend}"] if backend else []
    options += ["--keep-cluster"] if keep_cluster else []
    options += [f"--run-dir={run_dir}"] if run_dir else []
    history_dir = history_dir or Path("reports/histories") / f"change-{datetime.now():%Y%m%d-%H%M%S}"
    options += [f"--history-dir={history_dir}"]
    logs_dir = logs_dir or default_logs(history_dir)
    options += [f"--change-logs={logs_dir}"]
    with tempfile.TemporaryDirectory(prefix="quorum-change-") as private:  # 0700: a procedure may name secrets
        path = Path(private) / "procedure.yaml"
        path.write_text(yaml.safe_dump(procedure.model_dump(exclude_none=True), sort_keys=False))
        os.chmod(path, 0o600)
        # the record of pass or fail beside the Histories, where the gate and the report read it
        result = subprocess.run([sys.executable, "-m", "pytest", str(ROOT / SCENARIO), f"--change={path}",
                                 f"--junitxml={history_dir / 'junit.xml'}", f"--timeout={scenario_timeout_s(procedure)}",
                                 *options, "-p", "no:cacheprovider", "-q", "--no-header", "-rA", "--tb=line"],
                                cwd=Path.cwd())
    skipped = skip_reasons(history_dir / "junit.xml")
    for line in verdict_lines(history_dir):
        click.echo(line)
    if logs_dir.is_dir():
        click.echo(f"the steps' output: {logs_dir}")
    if skipped:  # nothing was judged: never a pass
        click.echo(f"the change was not judged: {'; '.join(skipped)}", err=True)
        sys.exit(3)
    sys.exit(0 if result.returncode == 0 else 1)


SCENARIO_MARGIN_S = 900  # beside the change and its rollback: the cluster's guard, the monitors' start and stop, settling


def scenario_timeout_s(procedure: Procedure) -> int:
    """How long the change's scenario may run: the change and its rollback, each within the change's budget, and the
    margin around them; pytest's default timeout (900 s) would cut a long change before its verdicts."""
    return int(2 * procedure.budget_s + SCENARIO_MARGIN_S)


def leader_kills(values: tuple[str, ...]) -> list[dict]:
    """`--kill-leader kube-controller-manager:30` as the procedure's faults (checked there: the lease's name and a
    time within the budget)."""
    kills = []
    for value in values:
        lease, sep, after = value.rpartition(":")
        try:
            kills.append({"kill_leader": lease, "after_s": float(after)})
        except ValueError:
            sep = ""
        if not sep or not lease:
            raise click.UsageError(f"--kill-leader {value!r} is not LEASE:SECONDS; e.g. --kill-leader "
                                   "kube-controller-manager:30")
    return kills


def verdict_lines(history_dir: Path) -> list[str]:
    """Every verdict the change's scenario recorded, one line each ("PASS checker: explanation"), from its History."""
    from harness.history import History

    lines = []
    for path in sorted(Path(history_dir).glob("scenarios_change_*.jsonl")):
        for event in History.load(path).events_of("verdict"):
            lines.append(f"{str(event.get('status')).upper():7} {event.get('checker')}: {event.get('explanation')}")
    return lines


def skip_reasons(junit: Path) -> list[str]:
    """Why the change's scenario was skipped, from pytest's junit record (none when it ran, or no record)."""
    import xml.etree.ElementTree as ElementTree

    try:
        cases = list(ElementTree.parse(junit).getroot().iter("testcase"))
    except (FileNotFoundError, ElementTree.ParseError):
        return ["pytest wrote no record of the run (see its output above)"]
    return [str(skip.get("message", "skipped")) for case in cases for skip in case.findall("skipped")]
