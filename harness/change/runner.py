"""Running a team's change, step by step, within its budget, and recording each step in the History.

A step on this machine runs in a process group of its own, so that one past its budget is stopped whole (SIGTERM,
then SIGKILL): nothing of a hung procedure is left running. A step inside a host runs under coreutils' `timeout` on
that host for the same reason (the SSH session's own timeout would leave the command running there). Each step's
output goes to a file of its own (mode 0600: a team's commands may print secrets) in the change's log directory,
outside reports/ and kept after the run, never into the History or the report: the History keeps the step's name,
where it ran, its exit code, its time and where its output is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from harness.change.procedure import Step
from harness.errors import QuorumError
from harness.history import History
from harness.target.hosts import Ran
from harness.target.protocol import Target

CHANGE = "change"  # event: a phase begins (phase, steps, budget_s)
CHANGE_STEP = "change.step"  # event: a step ended (phase, index, title, on, rc, timed_out, problem, took_s, log)
STOP_GRACE_S = 10.0  # from SIGTERM to SIGKILL for a step past its budget
TIMED_OUT = (124, 137)  # coreutils' timeout: the command outlived its time (124), and was killed after it (137)


@dataclass(frozen=True)
class StepOutcome:
    """What one step did: its exit code (None when it was stopped or never ran), whether its budget ran out, and
    why it could not run at all (`problem`)."""

    title: str
    on: str
    rc: int | None
    timed_out: bool
    took_s: float
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out and not self.problem


# runs `step` inside its host within budget_s, its output into the log file; (exit code, timed out)
HostRunner = Callable[[Step, float, Path], tuple[int, bool]]


def run_here(step: Step, budget_s: float, log: Path, env: dict[str, str] | None = None) -> tuple[int | None, bool]:
    """The step on this machine, in a process group of its own, stopped whole once `budget_s` has passed; `env` is
    added to this process's environment (where the cluster is: change_env)."""
    with _private(log) as out:
        process = subprocess.Popen(step.run, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env={**os.environ, **env} if env else None)
        try:
            return process.wait(timeout=budget_s), False
        except subprocess.TimeoutExpired:
            _stop_group(process)
            return None, True


def _stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the step's whole process group, then SIGKILL to whatever of it is left after the grace."""
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process.pid, signal.SIGKILL)  # the leader's children too, whether or not the leader exited
    process.wait()


def _signal_group(group: int, sig: signal.Signals) -> None:
    try:
        os.killpg(group, sig)
    except ProcessLookupError:  # the whole group is gone already
        pass


def run_in_host(run: Callable[..., Ran]) -> HostRunner:
    """A HostRunner over a target's `run(host, argv, timeout=...)` (harness/target/hosts.py)."""

    def runner(step: Step, budget_s: float, log: Path) -> tuple[int, bool]:
        seconds = max(1, int(budget_s))
        ran = run(step.host, ["timeout", f"--kill-after={int(STOP_GRACE_S)}s", f"{seconds}s", *step.run],
                  timeout=seconds + STOP_GRACE_S + 30.0)
        with _private(log) as out:
            out.write((ran.stdout + ran.stderr).encode())
        return ran.rc, ran.rc in TIMED_OUT

    return runner


def default_logs(history_dir: Path) -> Path:
    """Where a change's steps write their output unless told: beside Quorum's cache, one directory per history
    directory, never under reports/ (CI archives it, and a team's commands may print secrets)."""
    from harness.toolchain.cache import default_root

    return default_root() / "change-logs" / Path(history_dir).name


@contextlib.contextmanager
def _private(path: Path) -> Iterator[BinaryIO]:
    """A step's log file, created 0600 in a 0700 directory (truncated if it exists)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        yield out


def run_steps(steps: list[Step], *, phase: str, budget_s: float, history: History, log_dir: Path,
              in_host: HostRunner | None, env: dict[str, str] | None = None) -> list[StepOutcome]:
    """Each step in order until one does not succeed or the budget is spent; what each did. A step inside a host
    needs `in_host` (a target that runs commands in its hosts); a step on this machine gets `env` added."""
    history.event(CHANGE, phase=phase, steps=len(steps), budget_s=budget_s)
    deadline = time.monotonic() + budget_s
    outcomes = []
    for index, step in enumerate(steps, 1):
        left = deadline - time.monotonic()
        log = log_dir / f"{phase}-{index}.log"
        started = time.monotonic()
        if left <= 0:
            outcome = StepOutcome(step.title, step.on, None, True, 0.0, "not started: the change's budget was spent")
        else:
            outcome = _one(step, min(step.budget_s or left, left), log, in_host, started, env)
        history.event(CHANGE_STEP, phase=phase, index=index, title=outcome.title, on=outcome.on, rc=outcome.rc,
                      timed_out=outcome.timed_out, problem=outcome.problem, took_s=round(outcome.took_s, 3),
                      budget_s=step.budget_s, log=str(log))
        outcomes.append(outcome)
        if not outcome.ok:
            break
    return outcomes


def _one(step: Step, budget_s: float, log: Path, in_host: HostRunner | None, started: float,
         env: dict[str, str] | None) -> StepOutcome:
    try:
        if step.host is None:
            rc, timed_out = run_here(step, budget_s, log, env)
        elif in_host is None:
            return StepOutcome(step.title, step.on, None, False, 0.0, f"it runs on host {step.on}, and this target "
                               "runs no command in its hosts")
        else:
            rc, timed_out = in_host(step, budget_s, log)
    except FileNotFoundError as error:
        return StepOutcome(step.title, step.on, None, False, time.monotonic() - started,
                           f"{step.run[0]} was not found ({error.strerror})")
    except (OSError, QuorumError) as error:
        return StepOutcome(step.title, step.on, None, False, time.monotonic() - started, f"could not run: {error}")
    return StepOutcome(step.title, step.on, rc, timed_out, time.monotonic() - started)


def change_env(cluster: Target) -> dict[str, str]:
    """What a step on this machine is told of the cluster it changes: KUBECONFIG (the admin kubeconfig, which kubectl
    and the team's tools read), QUORUM_CLUSTER (the run directory, which `quorum install` and Quorum's other commands
    take for --cluster) and PATH with this Python's scripts first, so that `quorum` is the install that runs the
    change."""
    scripts = str(Path(sys.executable).parent)
    return {"KUBECONFIG": str(cluster.admin_kubeconfig), "QUORUM_CLUSTER": str(cluster.run_dir),
            "PATH": os.pathsep.join([scripts, os.environ.get("PATH", os.defpath)])}
