"""The real install (from the cache when warm) leaves every binary at its pinned version."""

import subprocess

import pytest

from harness.toolchain.catalog import TOOLS, Source, probe_version
from harness.toolchain.install import Toolchain
from harness.toolchain.versions import KUBERNETES_DEFAULT, Version

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def toolchain():
    chain = Toolchain(KUBERNETES_DEFAULT)
    chain.install()  # builds what is missing; verifies checksums of the rest
    return chain


@pytest.mark.parametrize("spec", TOOLS, ids=[t.name for t in TOOLS])
def test_each_binary_reports_its_pinned_version(toolchain, spec):
    path = toolchain.path(spec.name)
    found = probe_version(path, spec)
    assert found is not None, f"{path} does not run"
    if spec.source is Source.DEBIAN:
        assert found >= Version.parse(spec.minimum)
    elif spec.source is Source.KUBERNETES:
        assert found == Version.parse(KUBERNETES_DEFAULT)
    else:
        assert found == Version.parse(spec.pinned)


def test_kube_apiserver_prints_the_release_exactly(toolchain):
    out = subprocess.run([str(toolchain.path("kube-apiserver")), "--version"], capture_output=True, text=True)
    assert out.stdout.strip() == f"Kubernetes {KUBERNETES_DEFAULT}"


def test_kubernetes_binaries_are_static(toolchain):
    # CGO disabled: the binaries must run in any namespace or container image without glibc
    out = subprocess.run(["file", "-L", str(toolchain.path("kube-apiserver"))], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("`file` is not installed")
    assert "statically linked" in out.stdout


def test_manifest_records_source_and_checksum_of_every_binary(toolchain):
    manifest = toolchain.cache.load()
    for spec in TOOLS:
        entry = manifest.latest(spec.name)
        assert entry is not None, spec.name
        assert len(entry.sha256) == 64
        assert entry.source


def test_status_is_all_green(toolchain):
    rows = toolchain.status()
    assert [row.name for row in rows if not row.ok] == []


def test_second_install_builds_nothing(toolchain, capsys):
    before = {e.name: e.installed_at for e in toolchain.cache.load().entries.values() if e.source.startswith("Go")}
    toolchain.install([t.name for t in TOOLS if t.source is not Source.DEBIAN])
    after = {e.name: e.installed_at for e in toolchain.cache.load().entries.values() if e.source.startswith("Go")}
    assert before == after
    assert "build" not in capsys.readouterr().err
