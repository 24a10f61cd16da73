"""Typed errors. Every error Quorum raises to a user says what is wrong and how to fix it."""

from __future__ import annotations


class QuorumError(Exception):
    """Base class: `problem` says what is wrong, `fix` the command or change that repairs it."""

    def __init__(self, problem: str, fix: str = "") -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(problem if not fix else f"{problem}\n  fix: {fix}")


class Unsupported(QuorumError):
    """The target lacks the capability an operation needs (harness/target/protocol.py)."""


class ToolchainError(QuorumError):
    """A binary is missing, cannot be built, or has the wrong version."""


class TopologyError(QuorumError):
    """A topology file is invalid."""


class ClusterError(QuorumError):
    """A cluster could not be brought up, reached or torn down."""


class FaultError(QuorumError):
    """A fault could not be injected or was refused."""


class UnsafeToRestore(FaultError):
    """A fault's heal found its component where forcing the configured command line back would do harm (an etcd
    member's old binary on a cluster whose version has moved up): `quorum heal`'s sweep leaves that one alone."""

    def __init__(self, component: str, problem: str, fix: str = "") -> None:
        self.component = component  # '<component>@<host>'
        super().__init__(problem, fix)


class FaultRefused(FaultError):
    """The cluster's owner does not allow this fault now (an inventory's limits): nothing acted. A scenario that
    needs it is skipped with the limit named, not failed: the cluster did nothing wrong."""
