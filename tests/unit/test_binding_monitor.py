"""The scheduler's work probe (harness/monitors/binding.py) needs nodes that are Quorum's to bind to."""

import pytest

from harness.errors import Unsupported
from harness.history import History
from harness.monitors.binding import BindingMonitor
from tests.unit.conftest import fake_target


def test_a_cluster_without_hollow_nodes_is_refused_with_the_fix_before_anything_is_created(tmp_path):
    with pytest.raises(Unsupported) as raised:
        BindingMonitor(fake_target(tmp_path), History())
    assert "has no hollow nodes" in raised.value.problem and "hollow_nodes" in raised.value.fix
