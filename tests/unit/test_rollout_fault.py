"""The rollout fault's logic over an in-memory DaemonSet (the API calls of harness/clients/rollout.py replaced): what
it captures, what it rolls out, and its heal: kubectl rollout undo to the captured revision, through the bootstrap
apiserver when the API stays away, idempotent when nothing was changed; and its journal record rebuilds it."""

import contextlib

import pytest

from harness.clients import rollout
from harness.errors import FaultError
from harness.faults import rollout as fault_module
from harness.faults.base import Fault
from harness.faults.rollout import Rollout

BEFORE = ["kube-apiserver", "--secure-port=6443"]


class Cluster:
    """The API's view of one DaemonSet, an API that may be away, and the bootstrap apiserver that brings it back."""

    def __init__(self, api_up: bool = True) -> None:
        self.api_up, self.command, self.revision, self.undos, self.bootstraps = api_up, list(BEFORE), 3, [], 0
        self.api = object()
        self.admin_kubeconfig = "/run/admin.kubeconfig"

    @contextlib.contextmanager
    def bootstrap_apiserver(self):
        self.bootstraps += 1
        self.api_up = True
        yield


@pytest.fixture
def state(monkeypatch) -> Cluster:
    model = Cluster()
    workload = lambda: {"spec": {"template": {"spec": {"containers": [{"command": list(model.command)}]}}}}  # noqa: E731
    monkeypatch.setattr(rollout, "daemonset", lambda api, name: workload() if model.api_up else None)
    monkeypatch.setattr(rollout, "revision", lambda api, w: model.revision)
    monkeypatch.setattr(rollout, "set_command", lambda api, name, argv: setattr(model, "command", list(argv)))

    def undo(kubeconfig, name, to_revision):
        if not model.api_up:
            return "The connection to the server was refused"
        model.undos.append(to_revision)
        model.command = list(BEFORE)
        return None

    monkeypatch.setattr(rollout, "kubectl_rollout_undo", undo)
    monkeypatch.setattr(rollout, "pods", lambda api, component: rollout.Pods([{
        "spec": {"containers": [{"command": list(model.command)}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]) if model.api_up else None)
    monkeypatch.setattr(fault_module, "UNDO_TRIES_S", 0.1)
    return model


def test_the_flags_are_rolled_out_and_kubectl_rollout_undo_restores_the_captured_revision(state):
    fault = Rollout(add={"--quorum-no-such-flag": "x"})
    fault.plan(state)
    assert fault.captured == {"command": BEFORE, "revision": 3}
    fault.act(state)
    assert state.command == BEFORE + ["--quorum-no-such-flag=x"]
    fault.undo(state)
    assert state.command == BEFORE and state.undos == [3] and state.bootstraps == 0
    fault.undo(state)  # idempotent: nothing left to undo
    assert state.undos == [3]


def test_an_api_the_rollout_took_away_is_repaired_through_the_bootstrap_apiserver(state):
    fault = Rollout(add={"--quorum-no-such-flag": "x"})
    fault.plan(state)
    fault.act(state)
    state.api_up = False
    fault.undo(state)
    assert state.bootstraps == 1 and state.undos == [3] and state.command == BEFORE


def test_a_heal_before_the_fault_acted_changes_nothing_and_the_journal_record_rebuilds_it(state):
    fault = Rollout(add={"--v": "4"})
    fault.plan(state)
    fault.undo(state)
    assert state.undos == [] and state.bootstraps == 0
    again = Fault.from_record(fault.to_record())
    assert isinstance(again, Rollout) and again.captured == fault.captured and again.add == {"--v": "4"}


@pytest.mark.parametrize("add", [{}, {"v": "4"}, {"--v; rm -rf /": "4"}, {"--v": "4\n--x=1"}])
def test_a_rollout_without_proper_flags_is_refused_before_it_acts(state, add):
    with pytest.raises(FaultError, match="give flags as --name: value"):
        Rollout(add=add).plan(state)
    assert state.command == BEFORE


def test_a_target_without_a_bootstrap_apiserver_says_so_when_the_heal_needs_one(fake):
    from harness.errors import Unsupported

    with pytest.raises(Unsupported, match="the fake backend has no bootstrap apiserver to bring back"):
        fake.bootstrap_apiserver()
