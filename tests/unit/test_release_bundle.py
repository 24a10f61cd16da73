"""The release bundle for kind's air-gapped nodes (harness/backends/kind/release_bundle.py): refusals before any work."""

import sys
import subprocess
from pathlib import Path

import pytest

from harness.backends.kind import release_bundle
from harness.errors import QuorumError

ROOT = Path(__file__).resolve().parents[2]


def test_a_bundle_is_never_written_over_an_existing_directory(tmp_path):
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "theirs").write_text("kept")
    with pytest.raises(release_bundle.BundleError, match="already exists") as refused:
        release_bundle.write(engine=None, release="v1.35.4", directory=tmp_path / "bundle")  # type: ignore[arg-type]
    assert "name a directory that does not exist yet" in refused.value.fix
    assert [p.name for p in (tmp_path / "bundle").iterdir()] == ["theirs"]


def test_a_release_that_is_not_one_is_refused_with_its_fix(tmp_path):
    with pytest.raises(QuorumError):
        release_bundle.write(engine=None, release="1.35", directory=tmp_path / "bundle")  # type: ignore[arg-type]
    assert not (tmp_path / "bundle").exists()


def test_the_command_says_what_is_wrong_without_a_traceback(tmp_path):
    (tmp_path / "bundle").mkdir()
    result = subprocess.run([sys.executable, "-m", "harness.cli", "images", "bundle", "v1.35.4", str(tmp_path / "bundle")],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "already exists" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_the_command_refuses_a_release_that_is_not_one_before_anything_starts(tmp_path):
    result = subprocess.run([sys.executable, "-m", "harness.cli", "images", "bundle", "1.35", str(tmp_path / "bundle")],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "1.35" in result.stderr and not (tmp_path / "bundle").exists()
