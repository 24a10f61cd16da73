import subprocess
import sys

import pytest

from harness.errors import ToolchainError
from harness.toolchain.versions import (KUBERNETES_DEFAULT, RELEASE_MATRIX, UPGRADE_BINARIES, UPGRADE_TO, Version,
                                       kubernetes_version, matrix_binaries, staging_version)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Kubernetes v1.34.4", Version(1, 34, 4)),
        ("Client Version: v1.34.4\nKustomize Version: v5.7.1", Version(1, 34, 4)),
        ("etcd Version: 3.4.23\nGit SHA: Not provided", Version(3, 4, 23)),
        ("kind v0.33.0 go1.26.8 linux/amd64", Version(0, 33, 0)),
        ("iperf 3.12 (cJSON 1.7.15)", Version(3, 12, 0)),
        ("v1.35.0-rc.1", Version(1, 35, 0, "rc.1")),
    ],
)
def test_parse_first_version_in_tool_output(text, expected):
    assert Version.parse(text) == expected


def test_parse_rejects_text_without_a_version():
    with pytest.raises(ValueError, match="no version"):
        Version.parse("command not found")


def test_ordering_puts_prereleases_before_the_release():
    assert Version.parse("v1.35.0-rc.1") < Version.parse("v1.35.0")
    assert Version.parse("v1.34.10") > Version.parse("v1.34.9")
    assert sorted([Version(1, 35, 0), Version(1, 35, 0, "alpha.1"), Version(1, 34, 4)]) == [
        Version(1, 34, 4), Version(1, 35, 0, "alpha.1"), Version(1, 35, 0)]
    assert str(Version(1, 35, 0, "rc.1")) == "v1.35.0-rc.1"


@pytest.mark.parametrize("text", ["1.34", "latest", "v1.34"])
def test_kubernetes_version_must_be_a_full_release(text):
    with pytest.raises(ToolchainError) as info:
        kubernetes_version(text)
    assert "v1.34.4" in info.value.fix


def test_old_kubernetes_is_refused_with_a_fix():
    with pytest.raises(ToolchainError, match="not supported") as info:
        kubernetes_version("v1.20.1")
    assert "--kubernetes" in info.value.fix


def test_staging_version():
    assert staging_version(Version.parse("v1.34.4")) == "v0.34.4"
    assert staging_version(Version.parse("v1.36.0-beta.0")) == "v0.36.0-beta.0"


def test_etcds_wrapper_pins_follow_its_module_layout_per_minor():
    from harness.toolchain.versions import etcd_modules

    old, new = etcd_modules("v3.5.21"), etcd_modules("v3.6.16")
    assert "go.etcd.io/etcd/client/v2@v2.305.21" in old and "go.etcd.io/etcd/raft/v3@v3.5.21" in old
    assert not any("client/v2" in pin or "etcd/raft" in pin for pin in new)  # gone, or go.etcd.io/raft/v3 from 3.6
    assert "go.etcd.io/etcd/server/v3@v3.6.16" in new and "go.etcd.io/etcd/etcdctl/v3@v3.6.16" in new


@pytest.mark.parametrize("text", ["3.x", "v3.6", "v2.3.8", "v3.4.30", "v4.0.0", "v3.6.16-rc.0"])
def test_an_etcd_release_quorum_does_not_build_is_refused_with_the_fix(text):
    from harness.toolchain.versions import etcd_version

    with pytest.raises(ToolchainError) as refused:
        etcd_version(text)
    assert refused.value.fix and "v3.6.16" in refused.value.fix


def test_an_etcd_release_is_taken_with_or_without_its_v():
    from harness.toolchain.versions import Version, etcd_version

    assert etcd_version("3.6.16") == etcd_version("v3.6.16") == Version(3, 6, 16)


def test_the_release_matrix_is_adjacent_minors_from_what_ci_builds():
    assert RELEASE_MATRIX[:2] == (KUBERNETES_DEFAULT, UPGRADE_TO)
    minors = [Version.parse(release).minor for release in RELEASE_MATRIX]
    assert minors == list(range(minors[0], minors[0] + len(minors)))


def test_the_matrix_builds_kubectl_only_where_a_cluster_runs_the_release():
    """Each pair builds a cluster on its first release and upgrades it to its second (test_lifecycle_matrix.py)."""
    for running, to in zip(RELEASE_MATRIX[1:], RELEASE_MATRIX[2:]):
        assert "kubectl" in matrix_binaries(running) and set(UPGRADE_BINARIES) <= set(matrix_binaries(to))
    assert matrix_binaries(UPGRADE_TO) == UPGRADE_BINARIES + ("kubectl",)
    assert matrix_binaries(RELEASE_MATRIX[-1]) == UPGRADE_BINARIES
    with pytest.raises(ValueError, match="after the default"):
        matrix_binaries(KUBERNETES_DEFAULT)  # the toolchain installs every binary of it


@pytest.mark.parametrize("arguments", [["--release-matrix", "kubectl"], ["--release-matrix", "--upgrade-target"],
                                       ["--upgrade-target", "--kubernetes", "v1.35.4"]])
def test_a_choice_of_releases_refuses_other_choices_with_the_fix(arguments):
    result = subprocess.run([sys.executable, "-m", "harness.cli", "toolchain", "install", *arguments],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "chooses the releases itself" in result.stderr and "drop one" in result.stderr
    assert "Traceback" not in result.stderr
