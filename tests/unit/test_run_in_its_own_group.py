"""tests/integration/conftest.py's run_in_its_own_group: a command's output as subprocess.run gives it, and, when the
test ends first, its whole process group killed (a `quorum change` that a test's timeout stops leaves no pytest of
its own holding the cluster for the next test)."""

import subprocess
from pathlib import Path

import pytest

from harness.wait import eventually
from tests.integration.conftest import run_in_its_own_group


def test_a_command_that_ends_gives_its_exit_code_and_output():
    result = run_in_its_own_group(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"  # killed, not yet reaped by its new parent
    except FileNotFoundError:
        return True


def test_a_command_the_test_outlives_is_killed_with_its_children(tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):
        run_in_its_own_group(["sh", "-c", f"sleep 300 & echo $! > {tmp_path / 'child'}; wait"], timeout=2)
    child = int((tmp_path / "child").read_text())
    assert eventually(lambda: gone(child), 10.0), f"the command's child {child} outlived it"
