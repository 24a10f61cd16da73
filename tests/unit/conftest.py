"""Unit-test fixtures: a fake target (harness/backends/fake/) in place of a cluster."""

from pathlib import Path

import pytest

from harness.backends import registry
from harness.backends.fake.target import FakeTarget

ROOT = Path(__file__).resolve().parents[2]


def fake_target(tmp_path: Path, topology: str = "clusters/ha3.yaml", cls: type[FakeTarget] = FakeTarget) -> FakeTarget:
    """A model of the topology's cluster in tmp_path/run, opened as `cls` (a FakeTarget that may script a part)."""
    registry.get("fake").up(ROOT / topology, tmp_path / "run")
    return cls(tmp_path / "run")


@pytest.fixture
def fake(tmp_path: Path) -> FakeTarget:
    return fake_target(tmp_path)
