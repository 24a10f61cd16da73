"""The promotion policy (gate.yaml): the suites that must have run, the objectives every measured figure must
meet (harness/objectives/policy.py), the failures known and allowed for a while, the baseline tolerance."""

from __future__ import annotations

import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.errors import QuorumError
from harness.userfile import read_yaml
from harness.objectives.policy import Objectives
from harness.validation import NodeId, Reason, SuiteName

KNOWN_FAILURE_MAX_DAYS = 90  # an allowance is a ticket with a date, not a way to switch a check off


class PolicyError(QuorumError):
    """The gate policy file is invalid."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KnownFailure(Strict):
    test: NodeId = Field(description="one scenario's node id")
    until: datetime.date
    reason: Reason

    @field_validator("until")
    @classmethod
    def soon(cls, until: datetime.date) -> datetime.date:
        latest = datetime.date.today() + datetime.timedelta(days=KNOWN_FAILURE_MAX_DAYS)
        if until > latest:
            raise ValueError(f"{until} is more than {KNOWN_FAILURE_MAX_DAYS} days away: allow it until {latest} "
                             "at the latest, and renew it then if it still fails")
        return until


class Policy(Strict):
    required_suites: list[SuiteName] = Field(min_length=1)
    objectives: Objectives = Objectives()
    known_failures: list[KnownFailure] = Field(default_factory=list)
    baseline_tolerance_pct: float = Field(10.0, ge=0)

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
