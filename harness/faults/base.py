"""The fault interface and the Nemesis that injects and always heals.

Every fault is journaled (run_dir/faults.jsonl, harness/faults/journal.py) *before* it acts, with everything
needed to undo it, so `quorum heal` can reconstruct and heal the faults of a harness that was killed with
SIGKILL. undo() is idempotent and safe when act() never ran or only half ran.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from harness.errors import FaultError, QuorumError
from harness.faults.journal import Journal
from harness.faults.signals import deferred_signals
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
        """The fault a journal record describes; FaultError naming what is wrong with a record that cannot be one
        (an unknown fault name, say of a fault renamed since, or parameters it does not take)."""
        name = record.get("name")
        if name not in REGISTRY:
            raise FaultError(f"the journal names a fault {name!r} this Quorum does not know",
                             f"heal it by hand (the record: {json.dumps(record)[:300]}), then quorum heal again")
        try:
            return REGISTRY[name](**record["params"], id=str(record["id"]), captured=dict(record.get("captured") or {}))
        except (KeyError, TypeError, ValueError) as error:
            raise FaultError(f"the journal's {name} record cannot be rebuilt: {error}",
                             f"heal it by hand (the record: {json.dumps(record)[:300]})") from None


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
        self.cluster.admit(fault, list(self.active))  # the owner's limits (an inventory's), before anything acts
        if self._label is not None:
            self._label("fault", fault.name)
            target = fault.params().get("component") or fault.params().get("host")
            if target:
                self._label("component", str(target))
        with self._lock:
            self.journal.begin(fault)
            self.active.append(fault)
        try:  # before the fault's clock starts: writing records to remote hosts is no part of what is measured
            self.cluster.remember_fault(fault)
        except BaseException:
            with self._lock:  # nothing acted: forget it everywhere it was recorded
                self.active.remove(fault)
                self.journal.healed(fault)
            with contextlib.suppress(QuorumError):
                self.cluster.forget_fault(fault)
            raise
        self.history.event("fault.start", id=fault.id, name=fault.name, params=fault.params(), captured=fault.captured)
        context = self._step(f"inject {fault.describe()}") if self._step else contextlib.nullcontext()
        with context:
            try:
                fault.act(self.cluster)
            except BaseException:
                self.heal(fault)
                raise
        # a fault of several steps (a partition's hosts, one command each) is wholly in effect only now
        self.history.event("fault.in_place", id=fault.id, name=fault.name)
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
            try:
                self.cluster.forget_fault(fault)
            except QuorumError as error:  # healed all the same; a later heal finds the record and undoes it again
                self.history.event("fault.record_kept", id=fault.id, reason=error.problem)

    def heal_all(self) -> list[str]:
        """Heal every active fault, newest first; keep going if one heal fails, then report it. Signals that would
        stop the harness wait until the heal is done (harness/faults/signals.py)."""
        problems = []
        with deferred_signals():
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
