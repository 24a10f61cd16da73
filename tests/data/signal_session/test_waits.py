"""A stand-in session for tests/unit/test_hardening.py: a session fixture whose teardown leaves a mark, and a
test that waits to be signalled. With Quorum's plugin, SIGTERM and SIGHUP must unwind it like Ctrl-C."""

import os
import time
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def torn_down():
    yield
    Path(os.environ["QUORUM_TEST_MARK"]).write_text("torn down")


def test_waits(torn_down):
    print("WAITING", flush=True)
    time.sleep(60)
