"""The checkpointer's files on its node: inactive checkpoints, active ones in the kubelet's static directory, and
the secrets and config maps they mount (paths: manifest.py). Every write is a temporary file renamed into place, so
the kubelet never reads half a manifest. `root` is "/" in a node; tests give a directory."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from harness.checkpointer import manifest


class Disk:
    def __init__(self, root: str | Path = "/") -> None:
        self.root = Path(root)

    def _at(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def _write(self, path: Path, data: bytes, mode: int = 0o600) -> bool:
        """Write if different; whether it changed."""
        if path.exists() and path.read_bytes() == data:
            return False
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_bytes(data)
        temporary.chmod(mode)
        os.replace(temporary, path)
        return True

    def _names(self, directory: str, checkpoints_only: bool) -> set[str]:
        names = set()
        for path in sorted(self._at(directory).glob("*.json")):
            try:
                pod = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # not ours, or half-written by someone else: the kubelet's business
            if checkpoints_only and manifest.CHECKPOINT_OF not in (pod.get("metadata", {}).get("annotations") or {}):
                continue
            try:
                names.add(manifest.full_name(pod))
            except manifest.NotCheckpointable:
                continue
        return names

    def inactive(self) -> set[str]:
        return self._names(manifest.INACTIVE, checkpoints_only=False)

    def active(self) -> set[str]:
        """Checkpoints in the kubelet's directory (its other manifests, etcd's, are not ours)."""
        return self._names(manifest.ACTIVE, checkpoints_only=True)

    def owner(self, name: str) -> str | None:
        """The controller uid a saved checkpoint names (manifest.OWNER); None if it names none or is not saved."""
        try:
            return manifest.owner(json.loads((self._at(manifest.INACTIVE) / manifest.file_name(name)).read_text()))
        except (OSError, ValueError):
            return None

    def save(self, name: str, text: str) -> bool:
        """The inactive checkpoint of namespace/name; whether it changed (then the active copy is replaced on start)."""
        return self._write(self._at(manifest.INACTIVE) / manifest.file_name(name), text.encode())

    def save_data(self, directory: str, data: dict[str, bytes]) -> None:
        """A secret's or config map's keys as files, as the kubelet mounts them; keys no longer there removed."""
        target = self._at(directory)
        for key, value in data.items():
            if "/" in key or key in ("", ".", ".."):
                raise manifest.NotCheckpointable(f"key {key!r} of {directory} is not a file name")
            self._write(target / key, value)
        for stale in set(p.name for p in target.glob("*")) - set(data) if target.exists() else ():
            if not stale.startswith("."):
                (target / stale).unlink()

    def start(self, name: str) -> None:
        """The inactive checkpoint into the kubelet's directory (only if it differs: the kubelet restarts a pod
        whose manifest changed). Nothing to start before the first save (the API never answered yet)."""
        saved = self._at(manifest.INACTIVE) / manifest.file_name(name)
        if saved.exists():
            self._write(self._at(manifest.ACTIVE) / manifest.file_name(name), saved.read_bytes())

    def stop(self, name: str) -> None:
        (self._at(manifest.ACTIVE) / manifest.file_name(name)).unlink(missing_ok=True)

    def remove(self, name: str) -> None:
        """Everything of a checkpoint; the active manifest last, as the upstream checkpointer does (its pod may still
        be using the copies while it stops)."""
        namespace, _, pod = name.partition("/")
        for directory in (manifest.SECRETS, manifest.CONFIG_MAPS):
            shutil.rmtree(self._at(directory) / namespace / pod, ignore_errors=True)
        (self._at(manifest.INACTIVE) / manifest.file_name(name)).unlink(missing_ok=True)
        self.stop(name)
