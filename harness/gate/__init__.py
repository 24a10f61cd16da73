"""The promotion gate: a run's results against a policy -> promote (0), block (1) or cannot judge (2)."""

from harness.gate.evaluate import Decision, GateResult, Row, evaluate
from harness.gate.policy import KnownFailure, Policy, PolicyError

__all__ = ["Decision", "GateResult", "Row", "evaluate", "KnownFailure", "Policy", "PolicyError"]
