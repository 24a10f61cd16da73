"""The lifecycle suite across every adjacent pair of the release matrix (docs/lifecycle.md): ha3 built on release N,
upgraded to N+1 under load, rolled back, aborted half-way. CI runs the first pair in the main job
(test_scenarios_on_ha3.py); the later pairs run in the deep tier, whose set-up builds their releases (`quorum
toolchain install --release-matrix`; a test run on its own builds what is missing)."""

import sys
from pathlib import Path

import pytest
import yaml

from harness.backends import registry
from harness.toolchain.versions import RELEASE_MATRIX, matrix_binaries
from tests.excerpt import failure_excerpt
from tests.integration.conftest import run_in_its_own_group
from tests.tiers import Selection, passes

ROOT = Path(__file__).resolve().parents[2]
# (running, upgraded to): each release of the matrix upgraded to the next (tests/unit/test_versions.py: adjacent minors)
PAIRS = list(zip(RELEASE_MATRIX, RELEASE_MATRIX[1:]))


@passes("process", Selection(("scenarios/lifecycle/test_upgrade.py",)))
@pytest.mark.deep("CI runs the lifecycle suite on the first pair (the main job on ha3); this repeats it on the later "
                  "pairs of the matrix, each ~5 min plus its build")
# run on its own on a new machine, it builds both releases first, beside two cluster lanes (docs/ci.md)
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("running, to", PAIRS[1:], ids=[f"{a}-to-{b}" for a, b in PAIRS[1:]])
def test_the_lifecycle_suite_passes_on_each_later_pair(tmp_path, running, to):
    for release in (running, to):
        build = run_in_its_own_group([sys.executable, "-m", "harness.cli", "toolchain", "install", "--kubernetes",
                                      release, *matrix_binaries(release)], cwd=ROOT, timeout=1500)
        assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    topology = yaml.safe_load((ROOT / "clusters" / "ha3.yaml").read_text())
    topology.update(name="ha3-next", kubernetes=running, network={"subnet": "10.213.41.0/24"})
    (tmp_path / "ha3-next.yaml").write_text(yaml.safe_dump(topology))
    try:
        result = run_in_its_own_group([sys.executable, "-m", "pytest", "scenarios/lifecycle/test_upgrade.py",
                                       f"--topology={tmp_path / 'ha3-next.yaml'}", f"--upgrade-to={to}",
                                       f"--run-dir={tmp_path / 'run'}", f"--history-dir={tmp_path / 'histories'}",
                                       "-p", "no:cacheprovider", "-q"], cwd=ROOT, timeout=1500)
        assert result.returncode == 0, failure_excerpt(result)
        assert "3 passed" in result.stdout, result.stdout[-2000:]
        assert not (tmp_path / "run" / "state.json").exists(), "the cluster must be torn down"
    finally:
        # the run's pytest stopped before its session ended (this test's timeout) leaves its cluster's keepers running
        if (tmp_path / "run" / "state.json").exists():
            registry.down(tmp_path / "run")
