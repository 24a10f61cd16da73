"""Why a scenario was skipped, in a form the gate can judge (harness/gate/evidence.py). A skip is harmless only when
the target lacks what the scenario needs and the policy lets that suite run without it; a target that was still
unhealthy blocks a required scenario; a fault its owner refused, or any other reason, leaves the scenario unjudged.

A scenario that cannot run on a topology says what it lacks with `lacks(what, why)`; the plugin's own skips (a
capability the target lacks, a profile, a cluster that is not disposable, an unhealthy target, a refused fault) carry
their reasons' fixed beginnings below, and `classify` reads every skip back from its reason alone."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import NoReturn

import pytest


class SkipKind(str, Enum):
    LACKS = "lacks"  # the target or its topology lacks what the scenario needs (named in `lacking`)
    PROFILE = "profile"  # not part of this run's profile (a nightly scenario in a ci run)
    NOT_DISPOSABLE = "not-disposable"  # destructive, on a cluster that must not be broken on purpose
    REFUSED = "refused"  # the target's owner does not allow this fault now (an inventory's limits)
    UNHEALTHY = "unhealthy"  # the target was unhealthy for longer than it takes to heal itself
    OTHER = "other"  # anything else: a missing binary, a wrong option, an error in set-up


@dataclass(frozen=True)
class Skip:
    kind: SkipKind
    lacking: tuple[str, ...] = field(default_factory=tuple)

    def record(self) -> dict:
        return {"kind": self.kind.value, "lacking": list(self.lacking)}


# the beginnings of the reasons the plugin and the scenarios give (fixtures/plugin.py, fixtures/cluster.py)
LACKS = "lacks "
NOT_ON = "not on "  # `not on --backend kind: it needs static-pods (...)`
NOT_ON_THIS_TARGET = "not on this target: "
NIGHTLY = "nightly profile only"
DESTRUCTIVE = "destructive, and "
UNHEALTHY = "target "  # `target staging is unhealthy (for 60 s): [...]`
REFUSED = "refused: "

_NEEDS = re.compile(r"it needs ([a-z][a-z0-9-]*) \(")


def lacks(what: str, why: str) -> NoReturn:
    """Skip this scenario because the target lacks `what` (a capability-like name the policy can list under
    `may_lack`, e.g. spare-host), saying why."""
    pytest.skip(f"{LACKS}{what}: {why}")


def classify(reason: str) -> Skip:
    """The kind of a skip, from its reason."""
    if reason.startswith(LACKS):
        return Skip(SkipKind.LACKS, (reason[len(LACKS):].partition(":")[0],))
    if reason.startswith(NOT_ON_THIS_TARGET):  # an operation the target does not support (Unsupported)
        return Skip(SkipKind.LACKS, ("target-support",))
    if reason.startswith(NOT_ON):
        needed = tuple(_NEEDS.findall(reason))
        return Skip(SkipKind.LACKS, needed) if needed else Skip(SkipKind.OTHER)
    if reason.startswith(NIGHTLY):
        return Skip(SkipKind.PROFILE)
    if reason.startswith(DESTRUCTIVE):
        return Skip(SkipKind.NOT_DISPOSABLE)
    if reason.startswith(UNHEALTHY) and " is unhealthy " in reason:
        return Skip(SkipKind.UNHEALTHY)
    if reason.startswith(REFUSED):
        return Skip(SkipKind.REFUSED)
    return Skip(SkipKind.OTHER)
