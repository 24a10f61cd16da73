import contextlib
import os
from pathlib import Path

import pytest

from harness.backends import process
from harness.cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ROOT / "clusters"


def pytest_collection_modifyitems(items):
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _needs_root():
    if os.geteuid() != 0:
        pytest.skip("integration tests build real clusters and need root")


@contextlib.contextmanager
def running(topology: Path, run_dir: Path, **kwargs):
    """A real cluster for the duration of the block, always torn down."""
    cluster = None
    try:
        cluster = process.up(topology, run_dir, **kwargs)
        yield cluster
    finally:
        process.down(run_dir, keep_logs=True)


@pytest.fixture(scope="module")
def ha3(tmp_path_factory) -> Cluster:
    with running(CLUSTERS / "ha3.yaml", tmp_path_factory.mktemp("ha3") / "run") as cluster:
        yield cluster
