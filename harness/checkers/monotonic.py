"""Monotonicity: the revisions a client's acknowledged operations carry never go back. The etcd suite judges the
revision etcd returns with each acknowledged put (etcd.put); the field is a parameter, but a Kubernetes resourceVersion
is opaque to clients by the API's contract, so no scenario judges one."""

from __future__ import annotations

from collections import defaultdict

from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History


@checker("monotonicity")
def monotonicity(history: History, *, f: str, field: str = "revision") -> Verdict:
    """For each process, `extra[field]` of its ok `f` ops, in completion order, never decreases."""
    per_process: dict[str, list] = defaultdict(list)
    for op in sorted(history.ops_of(f), key=lambda o: o.complete):
        if op.ok and op.extra.get(field) is not None:
            per_process[op.process].append(op)
    observed = sum(len(v) for v in per_process.values())
    if not observed:
        return Verdict("monotonicity", Status.UNKNOWN, f"no {f} op carried a {field}", {"observations": 0})
    for process, ops in per_process.items():
        for previous, current in zip(ops, ops[1:]):
            if int(current.extra[field]) < int(previous.extra[field]):
                return Verdict("monotonicity", Status.FAIL,
                               f"{process} saw {field} go back from {previous.extra[field]} (t={previous.complete:.2f}) "
                               f"to {current.extra[field]} (t={current.complete:.2f})",
                               {"observations": observed, "violations": 1})
    return Verdict("monotonicity", Status.PASS, f"{observed} {field} observations by {len(per_process)} readers "
                   "never went back", {"observations": observed, "violations": 0})
