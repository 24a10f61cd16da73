"""The binary cache: <root>/bin/<name>/<version>/<name>, plus manifest.json describing each entry.

A binary is published by renaming a fully built and verified file into place, so an interrupted
build leaves at most a *.partial file that never looks complete. The manifest is rewritten
atomically (temporary file + rename) under a lock so that two installs cannot corrupt it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

CACHE_ENV = "QUORUM_CACHE"


def default_root() -> Path:
    """~/.cache/quorum unless QUORUM_CACHE says otherwise."""
    override = os.environ.get(CACHE_ENV)
    return Path(override).expanduser() if override else Path.home() / ".cache" / "quorum"


class ManifestEntry(BaseModel):
    name: str
    version: str
    source: str = Field(description="where it came from, e.g. 'go module proxy: k8s.io/kubernetes@v1.34.4'")
    path: str
    sha256: str
    installed_at: str


class Manifest(BaseModel):
    entries: dict[str, ManifestEntry] = Field(default_factory=dict)

    @staticmethod
    def key(name: str, version: str) -> str:
        return f"{name}@{version}"

    def get(self, name: str, version: str) -> ManifestEntry | None:
        return self.entries.get(self.key(name, version))

    def latest(self, name: str) -> ManifestEntry | None:
        """The most recently installed entry for a binary, whatever its version."""
        found = [entry for entry in self.entries.values() if entry.name == name]
        return max(found, key=lambda entry: entry.installed_at) if found else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class BinaryCache:
    """Versioned binaries and their manifest under one root directory."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or default_root()

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def binary_path(self, name: str, version: str) -> Path:
        return self.root / "bin" / name / version / name

    def work_dir(self, name: str) -> Path:
        """Scratch space for a build (wrapper modules and the like); never holds a published binary."""
        path = self.root / "work" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def load(self) -> Manifest:
        if not self.manifest_path.exists():
            return Manifest()
        return Manifest.model_validate_json(self.manifest_path.read_text())

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the cache lock: one installer at a time."""
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / ".lock").open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def valid(self, name: str, version: str) -> ManifestEntry | None:
        """The manifest entry if its file still exists with the recorded checksum, else None."""
        entry = self.load().get(name, version)
        if entry is None:
            return None
        path = Path(entry.path)
        if not path.is_file() or sha256_of(path) != entry.sha256:
            return None
        return entry

    def partial_path(self, name: str, version: str) -> Path:
        """Where a build writes before the binary is verified and published."""
        final = self.binary_path(name, version)
        final.parent.mkdir(parents=True, exist_ok=True)
        return final.with_name(f"{name}.partial-{os.getpid()}")

    def publish(self, name: str, version: str, built: Path, *, source: str) -> ManifestEntry:
        """Move a verified build into place and record it in the manifest."""
        final = self.binary_path(name, version)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(built, 0o755)
        os.replace(built, final)
        return self.record(name, version, final, source=source)

    def record(self, name: str, version: str, path: Path, *, source: str) -> ManifestEntry:
        """Record a binary that lives elsewhere (a Debian package's file) or was just published."""
        entry = ManifestEntry(
            name=name,
            version=version,
            source=source,
            path=str(path),
            sha256=sha256_of(path),
            installed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        manifest = self.load()
        manifest.entries[Manifest.key(name, version)] = entry
        self._write(manifest)
        return entry

    def _write(self, manifest: Manifest) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        temporary = self.manifest_path.with_suffix(f".tmp-{os.getpid()}")
        temporary.write_text(manifest.model_dump_json(indent=2))
        os.replace(temporary, self.manifest_path)

    def remove_partials(self, older_than_s: float = 0.0) -> list[Path]:
        """Delete *.partial-* files left by interrupted builds."""
        removed = []
        now = time.time()
        for path in (self.root / "bin").glob("*/*/*.partial-*"):
            if now - path.stat().st_mtime >= older_than_s:
                path.unlink(missing_ok=True)
                removed.append(path)
        return removed

    def free_bytes(self) -> int:
        self.root.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(self.root).free
