import contextlib
import ipaddress
import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.backends import registry
from harness.backends.process.target import ProcessTarget
from harness.net import netns
from harness.run import owner

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ROOT / "clusters"
# No checked-in topology uses these /24s: a test moves its cluster here when another cluster holds its subnet.
# (10.213.140-189: outside hollow_nodes.pod_cidr's default 10.213.192.0/18, which a topology's subnet must not overlap)
SPARE_SUBNETS = [ipaddress.ip_network(f"10.213.{third}.0/24") for third in range(140, 190)]


def pytest_collection_modifyitems(items):
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _needs_root():
    if os.geteuid() != 0:
        pytest.skip("integration tests build real clusters and need root")


def run_in_its_own_group(command: list[str], *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(command, capture_output=True, text=True)` in a process group of its own, killed whole when the
    test ends before the command (pytest's timeout, an interrupt): a command with children of its own (`quorum
    change` runs pytest) leaves none behind to hold its cluster's run directory against the next test."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                          **kwargs) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@contextlib.contextmanager
def running(topology: Path, run_dir: Path, backend: str = "process", **kwargs):
    """A real cluster for the duration of the block, owned by this test process (`quorum heal` elsewhere leaves it
    alone), always torn down."""
    owner.claim(run_dir)
    try:
        yield registry.get(backend).up(topology, run_dir, **kwargs)
    finally:
        registry.down(run_dir, keep_logs=True)
        owner.release(run_dir)


@pytest.fixture(scope="module")
def ha3(tmp_path_factory) -> ProcessTarget:
    with running(CLUSTERS / "ha3.yaml", tmp_path_factory.mktemp("ha3") / "run") as cluster:
        yield cluster


def on_a_free_subnet(topology: Path, into: Path) -> Path:
    """`topology` itself when its subnet is free on this machine, else a copy of it in `into` on a spare /24.

    Creating a cluster on a taken subnet is refused (that is tested elsewhere); a cluster that a killed run left
    behind, or someone's cluster kept with --keep-cluster, must not fail a test that is about something else."""
    data = yaml.safe_load(topology.read_text())
    if not netns.overlapping_routes(ipaddress.ip_network(data["network"]["subnet"])):
        return topology
    return on_a_spare_subnet(topology, into)


def on_a_spare_subnet(topology: Path, into: Path) -> Path:
    """A copy of `topology` in `into` on a spare /24, never its own subnet: for a second build of a twin that another
    lane may be building from its own file at the same moment (a check of its subnet and the build are not one
    step, so on_a_free_subnet cannot keep them apart)."""
    data = yaml.safe_load(topology.read_text())
    free = next((s for s in SPARE_SUBNETS if not netns.overlapping_routes(s)), None)
    if free is None:
        raise RuntimeError(f"{topology.name}: every spare /24 (10.213.140-189) is taken; "
                           "`quorum down --all` removes Quorum's clusters")
    data["network"]["subnet"] = str(free)
    moved = into / topology.name
    moved.write_text(yaml.safe_dump(data, sort_keys=False))
    return moved


# The docker lane (tests/conftest.py) runs beside the process lane, which holds ha3's and single's own subnets:
# its copies of those topologies live here. No checked-in topology uses these /24s.
DOCKER_LANE_SUBNETS = {"ha3.yaml": "10.213.13.0/24", "single.yaml": "10.213.11.0/24"}


def in_docker_lane(topology: Path, into: Path) -> Path:
    """A copy of a checked-in topology on the docker lane's subnet for it, written into `into`."""
    return on_subnet(topology, into, DOCKER_LANE_SUBNETS[topology.name])


def on_subnet(topology: Path, into: Path, subnet: str) -> Path:
    """A copy of a topology on another subnet, written into `into`: a module whose clusters must never meet another
    test's, whichever lane runs it."""
    data = yaml.safe_load(topology.read_text())
    data["network"]["subnet"] = subnet
    copy = into / topology.name
    copy.write_text(yaml.safe_dump(data, sort_keys=False))
    return copy
