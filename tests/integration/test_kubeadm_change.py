"""The reference kubeadm upgrade judged through a staging cluster's inventory (issue #54): kind's stand-in
(three control planes running kubeadm's static pods, reached only over SSH: tests/integration/standin.py) is
upgraded from v1.34.4 to v1.35.4 by clusters/procedures/kubeadm-upgrade.yaml under `quorum change --target`, with
the release's binaries and images from `quorum images bundle` (the nodes reach no registry), and every verdict
passes: the steps, the skew policy at every observation, the releases it ends on, availability, lost writes and
leader continuity."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.backends import registry
from harness.backends.docker.engine import ensure_engine
from harness.backends.kind import release_bundle
from tests.integration.conftest import CLUSTERS, ROOT, on_a_free_subnet
from tests.integration.standin import kind_standin
from tests.tiers import Selection, passes

CHANGE = Selection(("scenarios/change/test_change.py",))
PROCEDURE = ROOT / "clusters" / "procedures" / "kubeadm-upgrade.yaml"
UPGRADE_TO = "v1.35.4"


def control_planes_only(into: Path) -> Path:
    """clusters/kind.yaml without its workers (the upgrade is the control plane's), on a free subnet."""
    data = yaml.safe_load((CLUSTERS / "kind.yaml").read_text())
    data["kind"]["workers"] = 0
    (into / "kind.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return on_a_free_subnet(into / "kind.yaml", into / "moved")


@pytest.mark.deep("a kind cluster of its own, a release bundle and a nine-minute upgrade; presubmit proves the "
                  "change scenario on the process backend")
@pytest.mark.timeout(2700)
@passes("remote", CHANGE)
def test_the_reference_kubeadm_upgrade_passes_through_the_stand_ins_inventory(tmp_path):
    (tmp_path / "moved").mkdir()
    run_dir = tmp_path / "run"
    try:  # a build that fails half-way is taken down too
        cluster = registry.get("kind").up(control_planes_only(tmp_path), run_dir)
        bundle = release_bundle.write(ensure_engine(), UPGRADE_TO, tmp_path / "bundle")
        with kind_standin(cluster, tmp_path / "standin") as standin:
            hosts = yaml.safe_load(standin.inventory.read_text())["hosts"]
            order = sorted(hosts, key=lambda h: h["name"])  # control-plane, control-plane2, control-plane3
            env = {**os.environ, "BUNDLE": str(bundle.directory), "NODES": " ".join(h["address"] for h in order),
                   "SSH": f"ssh -i {standin.key} -o UserKnownHostsFile={standin.known_hosts} "
                          "-o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes -l root"}
            result = subprocess.run(
                [sys.executable, "-m", "harness.cli", "change", f"--target={standin.inventory}",
                 f"--procedure={PROCEDURE}", f"--run-dir={tmp_path / 'change-run'}",
                 f"--history-dir={tmp_path / 'histories'}", f"--change-logs={tmp_path / 'logs'}"],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=2400)
        output = result.stdout + result.stderr
        verdicts = [line for line in output.splitlines() if line.startswith(("PASS", "FAIL", "UNKNOWN"))]
        assert result.returncode == 0, "\n".join(verdicts) or output[-3000:]
        assert verdicts and all(line.startswith("PASS") for line in verdicts), "\n".join(verdicts)
        assert any("ends-on-releases" in line and UPGRADE_TO in line for line in verdicts), "\n".join(verdicts)
    finally:
        registry.down(run_dir)
