"""The checkpointer's decisions (harness/checkpointer/state.py) against the contract of docs/checkpointer.md: a
checkpoint is activated when its parent is not running on the node and the API cannot say otherwise, deactivated
when the parent runs again, collected a grace period after the API deleted the parent; the checkpointer's own
checkpoint stays active and goes last."""

import ast
import sys
from pathlib import Path

from harness.checkpointer.state import Action, Checkpoints, Kind, Plan, Seen, State, next_state

APISERVER, SELF = "kube-system/kube-apiserver-abc", "kube-system/pod-checkpointer-xyz"
GRACE = 60.0


def seen(api: bool = True, parent: bool = True, running: bool = True, kubelet: bool = True) -> Seen:
    return Seen(api_available=api, api_parent=parent, local_running=running, local_parent=kubelet)


def checkpointed(*names: str, active: set[str] = frozenset()) -> Checkpoints:
    checkpoints = Checkpoints(grace_s=GRACE)
    checkpoints.learn(active=set(active), inactive=set(names) - set(active), parents=set(), self_name=None)
    return checkpoints


def test_a_running_parent_is_checkpointed_inactive_and_one_only_the_api_knows_is_not():
    assert next_state(State(Kind.NEW), 0, seen(), GRACE).kind is Kind.INACTIVE
    assert next_state(State(Kind.NEW), 0, seen(running=False, kubelet=False), GRACE).kind is Kind.NEW


def test_power_loss_activates_the_checkpoint_and_the_parent_running_again_deactivates_it():
    checkpoints = checkpointed(APISERVER)  # after a reboot the agent knows only what is on disk
    plan = checkpoints.process(0, api_available=False, api_parents=set(), local_running=set(), local_parents=set())
    assert plan.starts == [APISERVER] and not plan.stops
    # the API answers through the checkpoint; the parent is scheduled here but not running yet: stays active
    plan = checkpoints.process(5, api_available=True, api_parents={APISERVER}, local_running=set(),
                               local_parents={APISERVER})
    assert plan.starts == plan.stops == [] and checkpoints.states[APISERVER].kind is Kind.ACTIVE
    plan = checkpoints.process(9, api_available=True, api_parents={APISERVER}, local_running={APISERVER},
                               local_parents={APISERVER})
    assert plan.stops == [APISERVER] and checkpoints.states[APISERVER].action is Action.STOP


def test_with_the_api_down_a_running_parent_keeps_its_checkpoint_inactive():
    checkpoints = checkpointed(APISERVER)
    plan = checkpoints.process(0, api_available=False, api_parents=set(), local_running={APISERVER},
                               local_parents={APISERVER})
    assert plan.starts == plan.stops == plan.removes == []


def test_a_parent_deleted_from_the_api_is_collected_after_the_grace_period_and_not_before():
    checkpoints = checkpointed(APISERVER)
    gone = dict(api_available=True, api_parents=set(), local_running=set(), local_parents=set())
    assert checkpoints.process(0, **gone).removes == []
    assert checkpoints.states[APISERVER].kind is Kind.INACTIVE_GRACE
    assert checkpoints.process(GRACE - 1, **gone).removes == []
    assert checkpoints.process(GRACE, **gone).removes == [APISERVER] and APISERVER not in checkpoints.states


def test_an_active_checkpoint_whose_parent_was_deleted_keeps_running_through_the_grace_period():
    checkpoints = checkpointed(APISERVER, active={APISERVER})
    gone = dict(api_available=True, api_parents=set(), local_running=set(), local_parents=set())
    plan = checkpoints.process(0, **gone)
    assert plan.starts == plan.stops == plan.removes == []  # it keeps running while the grace period lasts
    assert checkpoints.states[APISERVER].kind is Kind.ACTIVE_GRACE
    assert checkpoints.process(GRACE + 1, **gone).removes == [APISERVER]


def test_a_parent_rescheduled_during_the_grace_period_cancels_the_collection():
    state = next_state(State(Kind.INACTIVE), 0, seen(parent=False, running=False), GRACE)
    assert state.kind is Kind.INACTIVE_GRACE
    assert next_state(state, 10, seen(), GRACE).kind is Kind.INACTIVE
    assert next_state(state, 10, seen(running=False), GRACE).kind is Kind.ACTIVE
    # the API going away during the grace period does not collect a checkpoint the node may need
    assert next_state(state, GRACE + 5, seen(api=False, parent=False, running=False), GRACE).kind is Kind.ACTIVE


def test_the_checkpointers_own_checkpoint_always_starts_and_goes_last_when_its_parent_is_deleted():
    checkpoints = checkpointed(APISERVER)
    checkpoints.learn(active=set(), inactive=set(), parents={SELF}, self_name=SELF)
    here = dict(api_available=True, api_parents={APISERVER, SELF}, local_running={APISERVER, SELF},
                local_parents={APISERVER, SELF})
    assert checkpoints.process(0, **here).starts == [SELF]
    assert checkpoints.process(1, api_available=False, api_parents=set(), local_running=set(),
                               local_parents=set()).starts == [SELF, APISERVER]
    gone = dict(api_available=True, api_parents={APISERVER}, local_running={APISERVER}, local_parents={APISERVER})
    plan = checkpoints.process(2, **gone)
    assert plan.stops == [APISERVER, SELF]  # the checkpointer is going away: everything stops with it
    plan = checkpoints.process(2 + GRACE, **gone)
    assert plan.removes == [APISERVER, SELF] and checkpoints.states == {} and checkpoints.self_name is None


def test_a_checkpointer_superseded_by_its_updated_pod_removes_only_itself_and_leaves_the_rest_to_it():
    """The checkpointer's own DaemonSet updated (Lokomotive's seed: an update of the checkpointer lost the apiserver's
    checkpoints): its old copy hands over, every other checkpoint stays as it is for the new pod."""
    checkpoints = checkpointed(APISERVER)
    checkpoints.learn(active=set(), inactive=set(), parents={SELF}, self_name=SELF)
    checkpoints.process(0, api_available=True, api_parents={APISERVER, SELF}, local_running={APISERVER, SELF},
                        local_parents={APISERVER, SELF})
    plan = checkpoints.process(1, api_available=True, api_parents={APISERVER}, local_running={APISERVER},
                               local_parents={APISERVER}, superseded={SELF})
    assert plan == Plan(removes=[SELF]) and checkpoints.states == {APISERVER: State(Kind.INACTIVE)}


def test_the_checkpointer_imports_only_the_standard_library_as_it_runs_inside_the_nodes():
    directory = Path(__file__).resolve().parents[2] / "harness" / "checkpointer"
    for source in directory.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or name.startswith("harness.checkpointer") or top == "__future__", \
                    f"{source.name} imports {name}"
