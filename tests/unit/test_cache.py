import os

import pytest

from harness.toolchain.cache import CACHE_ENV, BinaryCache, default_root


@pytest.fixture
def cache(tmp_path):
    return BinaryCache(tmp_path / "cache")


def fake_build(cache, name, version, content=b"#!/bin/sh\necho v1\n"):
    partial = cache.partial_path(name, version)
    partial.write_bytes(content)
    return partial


def test_publish_moves_the_build_into_place_and_records_it(cache):
    entry = cache.publish("kubectl", "v1.34.4", fake_build(cache, "kubectl", "v1.34.4"), source="test")
    path = cache.binary_path("kubectl", "v1.34.4")
    assert entry.path == str(path) and path.is_file() and os.access(path, os.X_OK)
    assert len(entry.sha256) == 64
    assert cache.load().get("kubectl", "v1.34.4") == entry
    assert cache.valid("kubectl", "v1.34.4") == entry
    assert not list(path.parent.glob("*.partial-*"))


def test_versions_are_kept_side_by_side(cache):
    cache.publish("kubectl", "v1.34.4", fake_build(cache, "kubectl", "v1.34.4", b"a"), source="t")
    cache.publish("kubectl", "v1.35.0", fake_build(cache, "kubectl", "v1.35.0", b"b"), source="t")
    manifest = cache.load()
    assert manifest.get("kubectl", "v1.34.4").sha256 != manifest.get("kubectl", "v1.35.0").sha256
    assert manifest.latest("kubectl").version in {"v1.34.4", "v1.35.0"}


def test_a_changed_or_deleted_binary_is_not_valid(cache):
    cache.publish("kube-apiserver", "v1.34.4", fake_build(cache, "kube-apiserver", "v1.34.4"), source="t")
    cache.binary_path("kube-apiserver", "v1.34.4").write_bytes(b"truncated")
    assert cache.valid("kube-apiserver", "v1.34.4") is None
    cache.binary_path("kube-apiserver", "v1.34.4").unlink()
    assert cache.valid("kube-apiserver", "v1.34.4") is None


def test_an_unpublished_partial_build_never_counts_and_is_cleaned(cache):
    partial = fake_build(cache, "kubelet", "v1.34.4")
    assert cache.valid("kubelet", "v1.34.4") is None
    assert not cache.binary_path("kubelet", "v1.34.4").exists()
    assert cache.remove_partials() == [partial]
    assert not partial.exists()


def test_manifest_survives_reload_and_has_no_temporary_files(cache):
    cache.publish("kind", "v0.33.0", fake_build(cache, "kind", "v0.33.0"), source="go install")
    again = BinaryCache(cache.root)
    assert again.load().get("kind", "v0.33.0").source == "go install"
    assert [p.name for p in cache.root.iterdir() if p.name.startswith("manifest")] == ["manifest.json"]


def test_root_is_overridable_by_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert default_root() == tmp_path / "elsewhere"
    monkeypatch.delenv(CACHE_ENV)
    assert default_root().parts[-2:] == (".cache", "quorum")
