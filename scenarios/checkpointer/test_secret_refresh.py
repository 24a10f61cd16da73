"""A checkpointed pod's secret changes: the node's copy follows (issue #23, scenario 5). A checkpoint starts from the
copies of its pod's secrets and config maps on the node's disk; a copy that lags the API brings an old secret back at
the next power loss (e.g. a rotated certificate's old key). The secret is changed through the API and the copy read
where a bootkube-style checkpointer keeps it (harness/clients/checkpointed_secret.py)."""

import secrets

import pytest

from harness.checkers.recovery import followed_within
from harness.clients import checkpointed_secret
from harness.objectives.measurement import from_verdict
from harness.scenario import explain_all, judge, wait_recorded
from harness.target.capabilities import Capability
from harness.thresholds import checkpoint_refresh_s

pytestmark = [pytest.mark.requires(Capability.SELF_HOSTED), pytest.mark.destructive]

SAVED_S = 60.0  # the pod scheduled and started, one pass: a precondition, not a verdict


def _copied(cluster, value: str) -> bool:
    return value in checkpointed_secret.node_copies(cluster).values()


@pytest.mark.measures("checkpoint_refresh_s")
def test_a_checkpointed_pods_changed_secret_is_refreshed_on_its_node(cluster, history):
    """Create a secret and a pod annotated for checkpointing that mounts it, on a control-plane node; once the node
    holds the copy, change the secret: the node's copy holds the new value within checkpoint_refresh_s (the pass
    under way, the interval, the next pass: configuration), and within the checkpoint_refresh_s objective (no staler
    than a running pod's own mount, the kubelet's sync period)."""
    first, second = secrets.token_hex(8), secrets.token_hex(8)
    bound = checkpoint_refresh_s()
    with checkpointed_secret.checkpointed_pod(cluster.api, first):
        assert wait_recorded(history, "checkpointer.secret-saved", lambda: _copied(cluster, first), SAVED_S), (
            f"no control-plane node held a copy of the checkpointed pod's secret within {SAVED_S:.0f}s: "
            f"{checkpointed_secret.node_copies(cluster)}")
        checkpointed_secret.change(cluster.api, second)
        history.event("checkpointer.secret-changed")
        wait_recorded(history, "checkpointer.secret-refreshed", lambda: _copied(cluster, second), bound + 5.0)
        copies = checkpointed_secret.node_copies(cluster)
    verdict = followed_within(history, cause="checkpointer.secret-changed", effect="checkpointer.secret-refreshed",
                              what="the node's copy holding the changed secret", max_s=bound)
    verdicts = judge(history, verdict, figures={"copies_at_the_end": str(
        {host: "new" if value == second else "old" if value == first else "none" for host, value in copies.items()})},
        measures=[from_verdict("checkpoint_refresh_s", verdict, "after_s", bound=bound,
                               bound_source="the checkpointer's pass under way, its interval and the next pass")])
    assert all(verdicts), explain_all(verdicts)
