import re
from pathlib import Path

import pytest

from harness.toolchain.gomod import go_directive, staging_modules, version_ldflags, wrapper_gomod
from harness.toolchain.versions import Version

UPSTREAM = (Path(__file__).parent.parent / "data" / "kubernetes-v1.34.4.go.mod").read_text()


def replaced(gomod: str) -> dict[str, str]:
    return dict(re.findall(r"^\t(k8s\.io/\S+) => \1 (\S+)$", gomod, re.M))


def test_every_staging_module_is_replaced_with_the_published_version():
    gomod = wrapper_gomod(UPSTREAM, Version.parse("v1.34.4"))
    upstream_staging = set(re.findall(r"^\t(k8s\.io/\S+) => \./staging/src/", UPSTREAM, re.M))
    assert len(upstream_staging) == 31
    assert set(replaced(gomod)) == upstream_staging
    assert set(replaced(gomod).values()) == {"v0.34.4"}


def test_wrapper_requires_the_release_and_keeps_upstream_directives():
    gomod = wrapper_gomod(UPSTREAM, Version.parse("v1.34.4"))
    assert "require k8s.io/kubernetes v1.34.4\n" in gomod
    assert "\ngo 1.24.0\n" in gomod and "\ngodebug default=go1.24\n" in gomod
    # no ./staging path may survive: Go would look for it next to the wrapper
    assert "./staging" not in gomod


def test_staging_versions_follow_the_release_including_prereleases():
    gomod = wrapper_gomod(UPSTREAM, Version.parse("v1.36.0-rc.1"))
    assert set(replaced(gomod).values()) == {"v0.36.0-rc.1"}
    assert "require k8s.io/kubernetes v1.36.0-rc.1" in gomod


def test_non_kubernetes_gomod_is_rejected():
    with pytest.raises(ValueError, match="staging"):
        staging_modules("module example.com/x\n\ngo 1.22\n")


def test_go_directive():
    assert go_directive(UPSTREAM) == "1.24.0"


def test_ldflags_stamp_the_version_into_component_base_and_client_go():
    flags = version_ldflags(Version.parse("v1.34.4"), build_date="2026-01-02T03:04:05Z")
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"-X {package}.gitVersion=v1.34.4" in flags
        assert f"-X {package}.gitMajor=1" in flags
        assert f"-X {package}.gitMinor=34" in flags
        assert f"-X {package}.buildDate=2026-01-02T03:04:05Z" in flags
    assert "gitCommit" not in flags  # empty values are left out rather than stamped as ""
