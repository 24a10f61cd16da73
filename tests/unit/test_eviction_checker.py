"""pod-evicted (harness/checkers/eviction.py) on hand-written histories: the pod on a dead node evicted when its
toleration of the node's NoExecute taint ran out, counted from the first read that saw the taint; never evicted fails
only once the reads went on past the toleration and the allowance; no taint seen is no evidence."""

from harness.checkers import Status
from harness.checkers.eviction import EVICTED_EVENT, READ_OP, TAINTED_EVENT, pod_evicted
from harness.history import History, Outcome

NODE = "hollow-n1-0000"
TOLERATION_S = 5.0
ALLOWED_S = 3.0


def reads(history: History, first: float, last: float) -> None:
    t = first
    while t <= last:
        history.record("eviction", READ_OP, "lb", t, Outcome.OK, value=NODE, complete=t + 0.05)
        t += 1.0


def tainted(history: History, t: float = 160.0) -> None:
    history.event(TAINTED_EVENT, t=t, node=NODE, taints=["node.kubernetes.io/unreachable"])


def test_a_pod_evicted_as_its_toleration_ran_out_passes_with_its_figures():
    h = History()
    reads(h, 100.0, 170.0)
    tainted(h)
    h.event(EVICTED_EVENT, t=166.0, node=NODE, pod="evictee", how="gone")
    v = pod_evicted(h, toleration_s=TOLERATION_S, max_s=ALLOWED_S)
    assert v.passed, v.explanation
    assert v.figures["evicted_after_taint_s"] == 6.0 and v.figures["eviction_after_toleration_s"] == 1.0
    assert "gone 6.00s after the node was seen tainted (node.kubernetes.io/unreachable)" in v.explanation


def test_a_pod_left_on_the_dead_node_fails_once_the_reads_went_past_its_toleration_and_the_allowance():
    h = History()
    reads(h, 100.0, 178.0)
    tainted(h)
    v = pod_evicted(h, toleration_s=TOLERATION_S, max_s=ALLOWED_S)
    assert v.status is Status.FAIL, v.explanation
    assert "still there 18.00s after the node was seen tainted, 13.00s after its toleration of 5.00s ran out" \
        in v.explanation
    assert v.figures["eviction_after_toleration_s"] is None and v.figures["reads_after_taint"] == 19


def test_reads_that_stopped_before_the_toleration_and_allowance_ran_out_cannot_judge():
    h = History()
    reads(h, 100.0, 166.0)
    tainted(h)
    v = pod_evicted(h, toleration_s=TOLERATION_S, max_s=ALLOWED_S)
    assert v.status is Status.UNKNOWN and "too short to judge" in v.explanation, v.explanation


def test_a_pod_evicted_late_or_well_before_its_toleration_ran_out_fails():
    late = History()
    tainted(late)
    late.event(EVICTED_EVENT, t=170.0, node=NODE, pod="evictee", how="marked for deletion")
    v = pod_evicted(late, toleration_s=TOLERATION_S, max_s=ALLOWED_S)
    assert v.status is Status.FAIL and "5.00s after it ran out, more than the allowed 3.00s" in v.explanation
    early = History()
    tainted(early)
    early.event(EVICTED_EVENT, t=160.5, node=NODE, pod="evictee", how="gone")
    v = pod_evicted(early, toleration_s=TOLERATION_S, max_s=ALLOWED_S)
    assert v.status is Status.FAIL and "4.50s before it ran out" in v.explanation, v.explanation


def test_no_taint_seen_is_no_evidence_even_with_the_pod_gone():
    h = History()
    reads(h, 100.0, 200.0)
    h.event(EVICTED_EVENT, t=150.0, node=NODE, pod="evictee", how="gone")
    v = pod_evicted(h, toleration_s=TOLERATION_S, max_s=ALLOWED_S)
    assert v.status is Status.UNKNOWN and "never seen with a dead-node NoExecute taint" in v.explanation
