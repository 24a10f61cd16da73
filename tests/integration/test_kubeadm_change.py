"""A team's kubeadm change judged through a staging cluster's inventory (issue #54): kind's stand-in (three control
planes running kubeadm's static pods, reached only over SSH: tests/integration/standin.py), with the release's
binaries and images from `quorum images bundle` (the nodes reach no registry). Each bad procedure of
clusters/defects/procedures/kubeadm-*.yaml, written as a team might write it, fails for its reason and its own
rollback takes the cluster back to v1.34.4; then the reference upgrade (clusters/procedures/kubeadm-upgrade.yaml)
takes it to v1.35.4 and every verdict passes: the steps, the skew policy at every observation, the releases it ends
on, availability, lost writes and leader continuity. One cluster serves them all, in file order."""

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.backends import registry
from harness.backends.docker.engine import ensure_engine
from harness.backends.kind import release_bundle
from tests.integration.conftest import CLUSTERS, ROOT, on_a_free_subnet, run_in_its_own_group
from tests.integration.standin import kind_standin
from tests.tiers import Selection, fails, passes

CHANGE = Selection(("scenarios/change/test_change.py",))
PROCEDURE = ROOT / "clusters" / "procedures" / "kubeadm-upgrade.yaml"
BAD = Path("clusters/defects/procedures")
BUILT, UPGRADE_TO = "v1.34.4", "v1.35.4"

pytestmark = [pytest.mark.deep("a kind cluster of its own, a release bundle, a bad change with its rollback and a "
                               "nine-minute upgrade; presubmit proves the change scenario on the process backend")]
# One bad kubeadm procedure: its rollback is as long as a second upgrade. The skew rule's failure (a
# controller-manager upgraded before its apiserver) is proven on the process backend, by the same rule on the same
# releases (tests/integration/test_change.py, controller-manager-first.sh); through an inventory it cost the deep
# tier ~19 minutes (docs/ci.md).


def control_planes_only(into: Path) -> Path:
    """clusters/kind.yaml without its workers (the upgrade is the control plane's), on a free subnet."""
    data = yaml.safe_load((CLUSTERS / "kind.yaml").read_text())
    data["kind"]["workers"] = 0
    (into / "kind.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return on_a_free_subnet(into / "kind.yaml", into / "moved")


@dataclass(frozen=True)
class Staging:
    """The stand-in's inventory and what a team's procedure reads from its environment (BUNDLE, NODES, SSH)."""
    inventory: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def staging(tmp_path_factory) -> Iterator[Staging]:
    """A kind cluster on v1.34.4 (three control planes, no workers), the bundle of v1.35.4 and the cluster reached
    only through its inventory; taken down at the end, also when its build fails half-way."""
    directory = tmp_path_factory.mktemp("kubeadm-change")
    (directory / "moved").mkdir()
    run_dir = directory / "run"
    try:
        cluster = registry.get("kind").up(control_planes_only(directory), run_dir)
        bundle = release_bundle.write(ensure_engine(), UPGRADE_TO, directory / "bundle")
        with kind_standin(cluster, directory / "standin") as standin:
            hosts = yaml.safe_load(standin.inventory.read_text())["hosts"]
            order = sorted(hosts, key=lambda h: h["name"])  # control-plane, control-plane2, control-plane3
            yield Staging(standin.inventory, {
                **os.environ, "BUNDLE": str(bundle.directory), "NODES": " ".join(h["address"] for h in order),
                "SSH": f"ssh -i {standin.key} -o UserKnownHostsFile={standin.known_hosts} "
                       "-o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes -l root"})
    finally:
        registry.down(run_dir)


def quorum_change(staging: Staging, tmp_path: Path, procedure: Path) -> tuple[int, list[str], str]:
    """`quorum change --target INVENTORY --procedure PROCEDURE` from the repository's root, as a team runs it: its
    exit code, its verdict lines and its whole output."""
    result = run_in_its_own_group(
        [sys.executable, "-m", "harness.cli", "change", f"--target={staging.inventory}", f"--procedure={procedure}",
         f"--run-dir={tmp_path / 'change-run'}", f"--history-dir={tmp_path / 'histories'}",
         f"--change-logs={tmp_path / 'logs'}"], cwd=ROOT, env=staging.env, timeout=2400)
    output = result.stdout + result.stderr
    return result.returncode, [line for line in output.splitlines() if line.startswith(("PASS", "FAIL", "UNKNOWN"))], \
        output


@pytest.mark.timeout(2700)
@pytest.mark.parametrize("procedure, reason", [
    pytest.param("kubeadm-every-node-at-once.yaml", "[availability: fail]",
                 marks=fails("remote", CHANGE, "procedures/kubeadm-every-node-at-once.yaml"), id="every-node-at-once"),
])
def test_a_bad_kubeadm_procedure_fails_for_its_reason_and_its_rollback_takes_the_cluster_back(
        staging, tmp_path, procedure, reason):
    code, verdicts, output = quorum_change(staging, tmp_path, BAD / procedure)
    assert code == 1 and reason in output, "\n".join(verdicts) or output[-3000:]
    assert "PASS    change-completed: rollback: all 1 steps exited 0" in output, "\n".join(verdicts) or output[-3000:]
    ends = [line for line in verdicts if "ends-on-releases" in line]  # the change's, then its rollback's
    assert len(ends) == 2 and ends[1].startswith("PASS") and f"kube-apiserver {BUILT}" in ends[1], "\n".join(verdicts)


@pytest.mark.timeout(2700)
@passes("remote", CHANGE)
def test_the_reference_kubeadm_upgrade_passes_through_the_stand_ins_inventory(staging, tmp_path):
    code, verdicts, output = quorum_change(staging, tmp_path, PROCEDURE)
    assert code == 0, "\n".join(verdicts) or output[-3000:]
    assert verdicts and all(line.startswith("PASS") for line in verdicts), "\n".join(verdicts)
    assert any("ends-on-releases" in line and UPGRADE_TO in line for line in verdicts), "\n".join(verdicts)
