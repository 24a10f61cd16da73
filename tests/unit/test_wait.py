"""The one way Quorum waits (harness/wait.py): a look asked until it answers something true or time is up, once
more at the deadline, and what it answered last."""

import pytest

from harness.errors import FaultError
from harness.wait import eventually, until, wait_for


def test_the_answer_that_ended_the_wait_is_kept():
    answers = iter([None, "", "c2"])
    waited = until(lambda: next(answers), 5.0, 0.001)
    assert waited.held and waited.value == "c2" and waited.after_s < 5.0


def test_a_look_that_never_holds_is_asked_once_more_at_the_deadline_and_its_last_answer_kept():
    asked = []
    waited = until(lambda: asked.append(len(asked)) or [], 0.2, 0.05)
    assert not waited.held and waited.value == [] and waited.after_s >= 0.2
    assert 2 <= len(asked) <= 6  # about every 50 ms, and the last one at the deadline


def test_a_zero_timeout_still_looks_once():
    assert until(lambda: "now", 0.0).value == "now"
    assert not eventually(lambda: False, 0.0)


def test_wait_for_names_what_it_waited_for():
    assert wait_for(lambda: True, 1.0) >= 0.0
    with pytest.raises(FaultError, match="waiting for the scheduler's lease"):
        wait_for(lambda: False, 0.05, 0.01, what="the scheduler's lease")
