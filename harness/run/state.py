"""A run's state on disk (run_dir/state.json) and the registry of live runs (/run/quorum/runs)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field

from harness.errors import ClusterError

REGISTRY = Path(os.environ.get("QUORUM_REGISTRY", "/run/quorum/runs"))


class RunState(BaseModel):
    run_id: str
    name: str
    backend: str = "process"
    run_dir: str
    created_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    status: str = "starting"  # starting | ready | stopping
    bridge: str | None = None
    guard_route: bool = False
    netns: list[str] = Field(default_factory=list)
    veths: list[str] = Field(default_factory=list)
    iptables: list[list[str]] = Field(default_factory=list)
    components: list[str] = Field(default_factory=list)
    containers: list[str] = Field(default_factory=list)  # docker backend
    docker_network: str | None = None  # docker backend

    @property
    def path(self) -> Path:
        return Path(self.run_dir) / "state.json"

    def save(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(self.model_dump_json(indent=1))
        os.replace(temporary, self.path)

    def record(self, kind: str, value: object) -> None:
        """Journal an object before it is created, so that teardown after a crash finds it."""
        if kind == "guard_route":
            self.guard_route = True
        elif kind == "bridge":
            self.bridge = str(value)
        elif kind == "iptables":
            self.iptables.append(list(value))  # type: ignore[arg-type]
        elif kind == "container":
            self.containers.append(str(value))
        elif kind == "docker_network":
            self.docker_network = str(value)
        elif kind in ("netns", "veths", "veth"):
            (self.netns if kind == "netns" else self.veths).append(str(value))
        else:
            raise ValueError(f"unknown state record {kind}")
        self.save()

    @classmethod
    def load(cls, run_dir: Path) -> "RunState":
        """The run's state; ClusterError (one line, with the fix) when it is missing, cut short or not a state."""
        path = Path(run_dir) / "state.json"
        try:
            return cls.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise ClusterError(f"{run_dir} holds no run (no state.json)", "quorum status lists the runs") from None
        except (ValueError, OSError) as error:  # pydantic's ValidationError is a ValueError
            first = str(error).splitlines()[0][:200]
            raise ClusterError(f"{path} is unreadable ({first}): the run's state was cut short or overwritten",
                               "quorum down --all removes every run's leftovers, this one's included") from None


def register(state: RunState) -> None:
    REGISTRY.mkdir(parents=True, exist_ok=True)
    link = REGISTRY / state.run_id
    link.unlink(missing_ok=True)
    link.symlink_to(Path(state.run_dir).resolve())


def unregister(run_id: str) -> None:
    (REGISTRY / run_id).unlink(missing_ok=True)


def registered_runs() -> dict[str, Path]:
    """run id -> run directory of every run registered on this machine (live or crashed)."""
    if not REGISTRY.is_dir():
        return {}
    return {link.name: Path(os.readlink(link)) for link in REGISTRY.iterdir() if link.is_symlink()}
