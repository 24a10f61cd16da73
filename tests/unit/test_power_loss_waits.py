"""The power-loss recovery waits of the checkpointer suite (harness/scenario/power_loss.py) last exactly until their
verdicts' bounds have passed: a hand-back just inside its bound is recorded and passes; none at all ends the wait soon
after the bound. Bounds shortened to seconds; the clock is the real one."""

import time

from harness.faults import NodeRestart
from harness.history import History
from harness.scenario import power_loss


class Api:
    @staticmethod
    def ready() -> bool:
        return True


class Health:
    @staticmethod
    def problems() -> list[str]:
        return []


class Cluster:
    api = Api()
    health = Health()


def powered_on(history: History) -> float:
    history.event("fault.start", id="f1", name=NodeRestart.name)
    return history.event("fault.end", id="f1", name=NodeRestart.name).t


def test_a_hand_back_just_inside_its_bound_is_waited_for_and_passes(monkeypatch):
    monkeypatch.setattr(power_loss, "checkpoint_api_ready_s", lambda: 0.5)
    monkeypatch.setattr(power_loss, "bound_s", lambda: 2.0)
    history = History()
    on = powered_on(history)
    api, handed_back, healthy = power_loss.recovered(Cluster(), history, handed_back=lambda: time.monotonic() > on + 1.2,
                                                     what="handed back")
    assert api.passed and handed_back.passed and healthy.passed, (handed_back.explanation, healthy.explanation)


def test_no_hand_back_ends_the_waits_once_the_bound_has_passed(monkeypatch):
    monkeypatch.setattr(power_loss, "checkpoint_api_ready_s", lambda: 0.5)
    monkeypatch.setattr(power_loss, "bound_s", lambda: 1.0)
    history = History()
    on = powered_on(history)
    verdicts = power_loss.recovered(Cluster(), history, handed_back=lambda: False, what="handed back")
    assert time.monotonic() - on < 1.0 + 2 * 1.0 + 1.0  # each wait: the bound's rest + 1 s, then checked once
    assert [v.passed for v in verdicts] == [True, False, False] and "never observed" in verdicts[1].explanation
