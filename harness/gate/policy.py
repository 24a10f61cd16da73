"""The promotion policy (gate.yaml): the suites that must have run, the objectives every measured figure must
meet (harness/objectives/policy.py), the failures known and allowed for a while, the baseline tolerance."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.errors import QuorumError
from harness.userfile import read_yaml
from harness.objectives.catalog import MEASURES
from harness.capacity.expected import ExpectedLoad
from harness.objectives.policy import Objectives
from harness.validation import NodeId, Reason, SuiteName

KNOWN_FAILURE_MAX_DAYS = 90  # an allowance is a ticket with a date, not a way to switch a check off


class PolicyError(QuorumError):
    """The gate policy file is invalid."""


class Strict(BaseModel):
    # strict: a policy's numbers are numbers (not "1.5", not true), and finite
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class KnownFailure(Strict):
    test: NodeId = Field(description="one scenario's node id")
    until: datetime.date = Field(strict=False)  # written as text (YAML dates stay text: harness/userfile.py)
    reason: Reason

    @field_validator("until")
    @classmethod
    def soon(cls, until: datetime.date) -> datetime.date:
        latest = datetime.date.today() + datetime.timedelta(days=KNOWN_FAILURE_MAX_DAYS)
        if until > latest:
            raise ValueError(f"{until} is more than {KNOWN_FAILURE_MAX_DAYS} days away: allow it until {latest} "
                             "at the latest, and renew it then if it still fails")
        return until


class NotRun(Strict):
    """A scenario of a required suite that a run may leave out (deselect), and why: the gate lists it as not judged."""

    test: NodeId
    reason: Reason


class Samples(Strict):
    """How many samples of a measure the run must hold, and which of them is judged against the objective: the worst
    one, or a percentile of them (e.g. p90: the value 90 % of the samples are at or better than)."""

    min: int = Field(1, ge=1, le=1000)
    judge: Literal["worst", "p50", "p90", "p95", "p99"] = "worst"


class Policy(Strict):
    required_suites: list[SuiteName] = Field(min_length=1)
    objectives: Objectives = Objectives()
    # the production load the control plane must carry: the capacity scenario divides its knee by it
    expected_load: ExpectedLoad = ExpectedLoad()
    known_failures: list[KnownFailure] = Field(default_factory=list)
    baseline_tolerance_pct: float = Field(10.0, ge=0, le=1000)
    # suite (or "*", every suite) -> what its scenarios may find missing on the target and be skipped for, harmlessly:
    # a capability (harness/target/capabilities.py) or a topology's lack (harness/scenario/skips.py: spare-host, ...)
    may_lack: dict[Annotated[str, Field(pattern=r"^(\*|[a-z][a-z0-9_]{0,40})$")],
                   list[Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,40}$")]]] = Field(default_factory=dict)
    not_run: list[NotRun] = Field(default_factory=list)
    # objectives no scenario of this policy's suites can measure on this kind of target, said explicitly
    not_measured: list[str] = Field(default_factory=list)
    # on a target that is not disposable, its destructive scenarios are skipped: judge the read-only ones only, and
    # say so in the decision (false: such a skip leaves a required scenario unjudged)
    read_only_when_not_disposable: bool = False
    samples: dict[str, Samples] = Field(default_factory=dict)

    @field_validator("not_measured")
    @classmethod
    def known_objectives(cls, names: list[str]) -> list[str]:
        unknown = sorted(set(names) - set(MEASURES))
        if unknown:
            raise ValueError(f"unknown objectives {unknown}; name some of {', '.join(MEASURES)}")
        return names

    @field_validator("samples")
    @classmethod
    def known_measures(cls, samples: dict[str, Samples]) -> dict[str, Samples]:
        return cls.known_objectives(list(samples)) and samples

    def lacks_allowed(self, suite: str, lacking: tuple[str, ...]) -> bool:
        """Whether the policy lets `suite` skip a scenario for what the target lacks."""
        allowed = set(self.may_lack.get(suite, [])) | set(self.may_lack.get("*", []))
        return bool(lacking) and set(lacking) <= allowed

    def excused(self, nodeid: str) -> NotRun | None:
        return next((entry for entry in self.not_run if entry.test == nodeid), None)

    @model_validator(mode="before")
    @classmethod
    def no_thresholds(cls, data: object) -> object:
        if isinstance(data, dict) and "thresholds" in data:
            raise ValueError("`thresholds` is gone: what each figure must be is under `objectives` (docs/gate.md "
                             "lists them: availability_pct, lease_failover_s, lost_writes, ...)")
        return data

    @classmethod
    def load(cls, path: Path) -> "Policy":
        data = read_yaml(path, PolicyError, "policy file", "gate.yaml (docs/gate.md)")
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            lines = []
            for problem in error.errors():
                where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
                text = "unknown key" if problem["type"] == "extra_forbidden" else problem["msg"]
                lines.append(f"  - {where}: {text}")
            raise PolicyError(f"{path} is invalid:\n" + "\n".join(lines), "see docs/gate.md for every key") from None
