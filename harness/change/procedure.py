"""A team's own change as data: the commands of their procedure (an upgrade, a rollout, a scale), each run on this
machine or inside one host of the target, what the cluster must run when it is done, and the commands that undo it.

The commands are the team's, run as they wrote them: an argument list, never a shell line Quorum builds, so nothing
of a procedure file is pasted into a command. A procedure file:

    budget_s: 1800                     # the whole change, steps and waits included
    expect: {kubernetes: v1.35.4}      # every control-plane component's release when it is done
    steps:
      - {name: upgrade the first control plane, host: c1, run: [kubeadm, upgrade, apply, -y, v1.35.4], budget_s: 900}
      - {name: the others, run: [./upgrade-rest.sh]}
    rollback:
      - {run: [./downgrade.sh]}
    load: true                         # the profile's steady API load while the change runs
    faults:                            # the controller-manager's leader killed 30 s into the change
      - {kill_leader: kube-controller-manager, after_s: 30}
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import QuorumError
from harness.toolchain.versions import kubernetes_version
from harness.validation import HOST_NAME, Rule, text_of

LOCAL = "local"  # where a step without a host runs: this machine, in the directory Quorum was started from
ARGUMENT = Rule(r".{1,4000}", "a command's argument", "give each argument on one line of at most 4000 characters")
STEP_NAME = Rule(r"[A-Za-z0-9][A-Za-z0-9 ._:/@+-]{0,99}", "a step's name",
                 "name it in plain words, e.g. upgrade the first control plane")
MAX_BUDGET_S = 4 * 3600.0  # no change is waited for longer than a working afternoon


class ProcedureError(QuorumError):
    """A procedure file or command line that cannot be run: what is wrong and how to fix it."""


class Step(BaseModel):
    """One command of the change. `host`: the name of one of the target's hosts it runs in (checked against the
    target before anything runs), none for this machine; `budget_s`: how long it may take (none: what is left of
    the change's budget)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    run: list[text_of(ARGUMENT)] = Field(min_length=1, max_length=200)  # type: ignore[valid-type]
    host: str | None = None
    name: text_of(STEP_NAME) | None = None  # type: ignore[valid-type]
    budget_s: float | None = Field(None, gt=0, le=MAX_BUDGET_S)

    @field_validator("host")
    @classmethod
    def a_host_name(cls, value: str | None) -> str | None:
        return None if value is None else HOST_NAME.check(value)

    @property
    def on(self) -> str:
        """Where it runs, as the History says it: a host's name, or "local"."""
        return self.host or LOCAL

    @property
    def title(self) -> str:
        """What the History and the verdicts call the step: its name, else its program's."""
        return self.name or Path(self.run[0]).name


class LeaderKill(BaseModel):
    """A fault during the change: the process holding `lease` (kube-controller-manager's or kube-scheduler's) killed
    with SIGKILL `after_s` seconds into the change, wherever it runs then."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    kill_leader: Literal["kube-controller-manager", "kube-scheduler"]
    after_s: float = Field(gt=0, le=MAX_BUDGET_S)


class Procedure(BaseModel):
    """The change: its steps in order, its budget, the releases it must leave (`expect`: "kubernetes" or a
    component's name -> a release) and its rollback, run when a verdict on the change fails. Beside it: the
    profile's steady API load when `load` is true, and the `faults` at their times."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    steps: list[Step] = Field(min_length=1, max_length=100)
    budget_s: float = Field(1800.0, gt=0, le=MAX_BUDGET_S)
    expect: dict[str, str] = Field(default_factory=dict)
    rollback: list[Step] = Field(default_factory=list, max_length=100)
    load: bool = False
    faults: list[LeaderKill] = Field(default_factory=list, max_length=10)

    @field_validator("expect")
    @classmethod
    def releases(cls, value: dict[str, str]) -> dict[str, str]:
        known = ("kubernetes", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
        for what, release in value.items():
            if what not in known:
                raise ValueError(f"expect names {what!r}; fix: name one of {', '.join(known)}")
            try:
                kubernetes_version(release)
            except QuorumError as error:
                raise ValueError(f"expect {what}: {error.problem}; fix: {error.fix}") from None
        return value

    def hosts(self) -> set[str]:
        """Every host a step or a rollback step runs on."""
        return {step.host for step in (*self.steps, *self.rollback) if step.host is not None}


def parse_procedure(data: object, source: str) -> Procedure:
    """A Procedure from a file's parsed YAML, or a ProcedureError naming each field that is wrong and its fix."""
    try:
        return Procedure.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'the file'}: {e['msg']}"
                             for e in error.errors())
        raise ProcedureError(f"{source}: {problems}", f"correct {source} (docs/lifecycle.md, \"Your own procedure\"; "
                                                      "`quorum change --help`)") from None


def load_procedure(path: Path) -> Procedure:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProcedureError(f"{path} does not exist", "give the path of your procedure file") from None
    except (UnicodeDecodeError, yaml.YAMLError) as error:
        raise ProcedureError(f"{path} is not a YAML file: {error}", "write it as docs/lifecycle.md shows") from None
    except OSError as error:  # a directory, a file it may not read
        raise ProcedureError(f"{path} cannot be read: {error.strerror}", "give the path of your procedure file") \
            from None
    return parse_procedure(data, str(path))


def one_command(argv: list[str], *, expect: dict[str, str], budget_s: float, rollback: list[str] | None = None,
                load: bool = False, faults: list[dict] | None = None) -> Procedure:
    """The procedure of `quorum change ... -- CMD ARGS`: one local step, the rollback command if one is given, the
    load and the faults beside it."""
    data = {"steps": [{"run": argv}], "expect": expect, "budget_s": budget_s,
            "rollback": [{"run": rollback}] if rollback else [], "load": load, "faults": faults or []}
    return parse_procedure(data, "the command line")
