"""A dead node's pod evicted once its toleration ran out: from the node first seen carrying a dead-node NoExecute taint
to the pod first seen marked for deletion or gone (harness/monitors/eviction.py records both), less the pod's
toleration. The taint-eviction controller times the toleration from when it sees the taint, so a pod evicted much
later was left on a dead node (the controller off, or stuck), and one evicted well before was not given its
toleration. A node never seen tainted is no evidence either way: whether it was declared dead is
node_death.py's to judge."""

from __future__ import annotations

from harness.checkers.verdict import Status, Verdict, checker, fmt
from harness.history import History

READ_OP = "eviction.read"  # the monitor's read of the node and the pod
TAINTED_EVENT = "eviction.tainted"  # the first read finding the node with a dead-node NoExecute taint
EVICTED_EVENT = "eviction.evicted"  # the first read finding the pod marked for deletion or gone


@checker("pod-evicted")
def pod_evicted(history: History, *, toleration_s: float, max_s: float) -> Verdict:
    """`toleration_s`: the pod's toleration of the node's dead-node taints; `max_s`: how long after it ran out the
    pod may still be on the node (before it: as much early, for the two reads' lateness)."""
    tainted = next(iter(history.events_of(TAINTED_EVENT)), None)
    if tainted is None:
        return Verdict("pod-evicted", Status.UNKNOWN, "the node was never seen with a dead-node NoExecute taint: "
                       "nothing was due to be evicted", {"eviction_after_toleration_s": None})
    node = tainted.get("node")
    due = tainted.t + toleration_s
    evicted = next(iter(history.events_of(EVICTED_EVENT)), None)
    if evicted is not None:
        after = evicted.t - due
        figures = {"node": node, "tainted_t": round(tainted.t, 3), "evicted_after_taint_s": round(evicted.t - tainted.t, 3),
                   "eviction_after_toleration_s": round(after, 3), "toleration_s": toleration_s}
        said = (f"the pod on {node} {evicted.get('how', 'evicted')} {fmt(evicted.t - tainted.t)} after the node was seen "
                f"tainted ({', '.join(tainted.get('taints') or [])}), its toleration {fmt(toleration_s)}")
        if after > max_s:
            return Verdict("pod-evicted", Status.FAIL, f"{said}: {fmt(after)} after it ran out, more than the allowed "
                           f"{fmt(max_s)}", figures)
        if after < -max_s:
            return Verdict("pod-evicted", Status.FAIL, f"{said}: {fmt(-after)} before it ran out", figures)
        return Verdict("pod-evicted", Status.PASS, f"{said} (allowed {fmt(max_s)} either side of it running out)",
                       figures)
    reads = [op for op in history.ops_of(READ_OP) if op.ok and op.invoke >= tainted.t]
    last = max((op.invoke for op in reads), default=tainted.t)
    figures = {"node": node, "tainted_t": round(tainted.t, 3), "evicted_after_taint_s": None,
               "eviction_after_toleration_s": None, "toleration_s": toleration_s, "reads_after_taint": len(reads)}
    if last - due > max_s:
        return Verdict("pod-evicted", Status.FAIL, f"the pod on {node} was still there {fmt(last - tainted.t)} after the "
                       f"node was seen tainted, {fmt(last - due)} after its toleration of {fmt(toleration_s)} ran out "
                       f"(allowed {fmt(max_s)}; {len(reads)} reads)", figures)
    return Verdict("pod-evicted", Status.UNKNOWN, f"the pod on {node} was read for {fmt(last - tainted.t)} after the "
                   f"node was seen tainted, too short to judge its toleration of {fmt(toleration_s)} + "
                   f"{fmt(max_s)}", figures)
