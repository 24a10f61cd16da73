"""The excerpt of a failed inner pytest run names its failing test and verdict before the tail."""

import subprocess

from tests.excerpt import MAX_LINE, failure_excerpt

OUTPUT = "\n".join([
    "....F",
    "=================================== FAILURES ===================================",
    "    def test_upgrade(): ...",
    "E   AssertionError: [lease-handover: fail] kube-controller-manager: c1 -> c2 in 27.1 s: not within 24.3 s",
    "E    +  where False = all([" + "Verdict(...), " * 200 + "])",
    *(f"traceback line {i}" for i in range(400)),
    "FAILED scenarios/lifecycle/test_upgrade.py::test_a_rolling_upgrade - AssertionError: [lease-handover: fail]",
    "1 failed, 43 passed in 816.00s",
]) + "\n"


def test_the_excerpt_leads_with_the_failed_test_and_its_error_lines_cut_short_then_the_tail():
    excerpt = failure_excerpt(subprocess.CompletedProcess([], 1, stdout=OUTPUT, stderr="warning"), tail=200)
    lines = excerpt.splitlines()
    assert lines[0].startswith("FAILED scenarios/lifecycle/test_upgrade.py::test_a_rolling_upgrade")
    assert lines[1].startswith("E   AssertionError: [lease-handover: fail]")
    assert len(lines[2]) == MAX_LINE
    assert "traceback line 10\n" not in excerpt  # the middle of the traceback is left out
    assert excerpt.endswith("1 failed, 43 passed in 816.00s\nwarning")
