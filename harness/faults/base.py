"""The fault interface, the journal of injected faults, and the Nemesis that injects and always heals.

Every fault is journaled (run_dir/faults.jsonl) *before* it acts, with everything needed to undo it,
so `quorum heal` can reconstruct and heal the faults of a harness that was killed with SIGKILL.
heal() is idempotent and safe when inject() never ran or only half ran.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from harness.errors import FaultError
from harness.history import History
from harness.target.capabilities import Capability
from harness.target.protocol import Target
from harness.wait import wait_for  # noqa: F401 - faults wait the one way

REGISTRY: dict[str, type["Fault"]] = {}


@dataclass
class Fault:
    """Subclasses declare their parameters as dataclass fields (JSON-serialisable) and implement act/undo."""

    name: ClassVar[str] = "fault"
    destructive: ClassVar[bool] = True
    requires: ClassVar[tuple[Capability, ...]] = ()  # what the target must offer (Target.capabilities)
    id: str = field(default_factory=lambda: f"f{secrets.token_hex(4)}", kw_only=True)
    captured: dict[str, Any] = field(default_factory=dict, kw_only=True)  # what plan() resolved (pids, leader)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a family's shared base class names no fault of its own
            REGISTRY[cls.name] = cls

    # ---- to implement --------------------------------------------------------------------------

    def unavailable(self, target: Target) -> str | None:
        """Why this fault cannot run on this target (a missing capability), or None."""
        return target.lacks(*self.requires)

    def plan(self, target: Target) -> None:
        """Resolve targets into self.captured. No side effects: it runs before the journal entry."""

    def act(self, target: Target) -> None:
        raise NotImplementedError

    def undo(self, target: Target) -> None:
        raise NotImplementedError

    # ---- common --------------------------------------------------------------------------------

    def available(self, target: Target) -> bool:
        return self.unavailable(target) is None

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("id", "captured")}

    def describe(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params().items())
        return f"{self.name}({args})"

    def to_record(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "params": self.params(), "captured": self.captured}

    @staticmethod
    def from_record(record: dict[str, Any]) -> "Fault":
        cls = REGISTRY[record["name"]]
        return cls(**record["params"], id=record["id"], captured=record.get("captured", {}))


class Journal:
    """run_dir/faults.jsonl: 'begin' before a fault acts, 'healed' after it is undone."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / "faults.jsonl"
        self._lock = threading.Lock()

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock, self.path.open("a") as handle:
            handle.write(json.dumps({**record, "wall": time.time()}) + "\n")

    def begin(self, fault: Fault) -> None:
        self._append({"state": "begin", **fault.to_record()})

    def healed(self, fault: Fault) -> None:
        self._append({"state": "healed", "id": fault.id})

    def active(self) -> list[dict[str, Any]]:
        """Faults begun and not healed, oldest first."""
        if not self.path.exists():
            return []
        begun: dict[str, dict[str, Any]] = {}
        for line in self.path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("state") == "begin":
                begun[record["id"]] = record
            elif record.get("state") == "healed":
                begun.pop(record["id"], None)
        return list(begun.values())


class Nemesis:
    """Injects faults into one cluster, records them in the History, and heals them whatever happens."""

    def __init__(self, cluster: Target, history: History | None = None, step: Any = None, label: Any = None) -> None:
        self.cluster = cluster
        self.history = history or History()
        self.journal = Journal(cluster.run_dir)
        self.active: list[Fault] = []
        self._step = step  # a context-manager factory (allure.step) for reports; optional
        self._label = label  # allure.dynamic.label: the report's fault and component labels; optional
        self._lock = threading.RLock()

    def inject(self, fault: Fault) -> Fault:
        if fault.destructive and not self.cluster.disposable:
            raise FaultError(
                f"cluster {self.cluster.name} is not marked disposable; {fault.name} is destructive and refuses it",
                "add `disposable: true` to the topology if this cluster may be broken on purpose",
            )
        reason = fault.unavailable(self.cluster)
        if reason:
            raise FaultError(f"{fault.name} is unavailable here: {reason}", "skip this scenario on this machine")
        try:
            fault.plan(self.cluster)
        except KeyError as error:  # a host or component the topology does not have; nothing has acted yet
            raise FaultError(f"{fault.describe()}: {error.args[0]}",
                             "name a host or component of this topology (`quorum status` lists them)") from None
        if self._label is not None:
            self._label("fault", fault.name)
            target = fault.params().get("component") or fault.params().get("host")
            if target:
                self._label("component", str(target))
        with self._lock:
            self.journal.begin(fault)
            self.active.append(fault)
        self.history.event("fault.start", id=fault.id, name=fault.name, params=fault.params(), captured=fault.captured)
        context = self._step(f"inject {fault.describe()}") if self._step else contextlib.nullcontext()
        with context:
            try:
                fault.act(self.cluster)
            except BaseException:
                self.heal(fault)
                raise
        return fault

    def heal(self, fault: Fault) -> None:
        with self._lock:
            if fault not in self.active:
                return
            context = self._step(f"heal {fault.describe()}") if self._step else contextlib.nullcontext()
            with context:
                fault.undo(self.cluster)
            self.active.remove(fault)
            self.journal.healed(fault)
            self.history.event("fault.end", id=fault.id, name=fault.name)

    def heal_all(self) -> list[str]:
        """Heal every active fault, newest first; keep going if one heal fails, then report it."""
        problems = []
        for fault in reversed(list(self.active)):
            try:
                self.heal(fault)
            except Exception as error:  # noqa: BLE001 - the other faults must still be healed
                problems.append(f"{fault.describe()}: {error}")
        return problems

    @contextlib.contextmanager
    def fault(self, fault: Fault) -> Iterator[Fault]:
        """`with nemesis.fault(Kill(...)):` the fault is active inside the block and healed on exit."""
        self.inject(fault)
        try:
            yield fault
        finally:
            self.heal(fault)


@contextlib.contextmanager
def heal_on_signals(nemesis: Nemesis) -> Iterator[None]:
    """SIGTERM and SIGINT heal active faults: both become KeyboardInterrupt so finally blocks run. SIGINT is
    handled explicitly too: a process started in the background by a non-interactive shell (`cmd &` in a CI
    script) inherits SIGINT ignored, so Python's own KeyboardInterrupt handler is not installed there (seen:
    `kill -INT` left a partition and a paused scheduler in place for 10 minutes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {signum: signal.signal(signum, on_signal) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        nemesis.heal_all()


def heal_leftovers(cluster: Target) -> list[str]:
    """Heal faults journaled by a harness that died (what `quorum heal` does for each run)."""
    journal = Journal(cluster.run_dir)
    healed = []
    for record in journal.active():
        fault = Fault.from_record(record)
        fault.undo(cluster)
        journal.healed(fault)
        healed.append(fault.describe())
    return healed
