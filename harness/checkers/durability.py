"""Durability: every acknowledged write is still there at the end."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker
from harness.history import History

WRITES = {"etcd": "etcd.put", "kube": "kube.create"}
READS = {"etcd": "etcd.read_all", "kube": "kube.read_all"}


@checker("durability")
def durability(history: History, *, system: str) -> Verdict:
    """system: "etcd" or "kube". The final read-back op's value is the list of keys/names found."""
    writes = history.ops_of(WRITES[system])
    reads = [o for o in history.ops_of(READS[system]) if o.ok]
    acknowledged = {o.value for o in writes if o.ok}
    if not reads:
        return Verdict("durability", Status.UNKNOWN, f"no successful final read-back of {system} was recorded; "
                       f"{len(acknowledged)} acknowledged writes cannot be checked", {"acknowledged": len(acknowledged)})
    found = set(reads[-1].value or [])
    lost = sorted(acknowledged - found)
    unknown = [o.value for o in writes if o.outcome.value == "unknown"]
    figures = {"acknowledged": len(acknowledged), "lost": len(lost), "unknown_outcome": len(unknown),
               "unknown_applied": len(set(unknown) & found)}
    if not acknowledged:
        return Verdict("durability", Status.UNKNOWN, f"no {system} write was acknowledged", figures)
    if lost:
        return Verdict("durability", Status.FAIL, f"{len(lost)} of {len(acknowledged)} acknowledged {system} writes "
                       f"are missing at the end, e.g. {lost[:5]}", {**figures, "lost_examples": lost[:10]})
    return Verdict("durability", Status.PASS, f"all {len(acknowledged)} acknowledged {system} writes were read back "
                   f"({len(unknown)} writes had an unknown outcome, {figures['unknown_applied']} of them applied)", figures)
