"""The fake target's keeper (harness/target/keeper.py): holds, overrides and restarts as changes to the model in
the run directory (fake.json), each recorded in its calls, so unit tests see what a fault asked of the keeper."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.target.capabilities import Capability
from harness.target.keeper import Keeper
from harness.topology import Component

if TYPE_CHECKING:
    from harness.backends.fake.target import FakeTarget


class FakeKeeper(Keeper):
    """Restarts at once: every promise is a second."""

    # the model keeps a self-hosted control plane too, so that the checkpointer's scenarios run on it
    OFFERS = Keeper.OFFERS | {Capability.SELF_HOSTED}

    def __init__(self, target: "FakeTarget", component: Component) -> None:
        self.target = target
        self.component = component

    def component_id(self, host: str) -> str:
        return f"{self.component.value}@{host}"

    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        with self.target.changing() as model:
            model["calls"].append(["hold", self.component_id(host), signal])
            entry = self.target.entry(model, self.component, host)
            entry["held"], entry["pid"] = True, None

    def release(self, host: str) -> bool:
        with self.target.changing() as model:
            model["calls"].append(["release", self.component_id(host)])
            entry = self.target.entry(model, self.component, host)
            was = entry["held"]
            if entry["held"] or entry["pid"] is None:
                entry["held"] = False
                self.target.start(model, entry)
            return was

    def held(self, host: str) -> bool:
        return self.target.entry(self.target.model(), self.component, host)["held"]

    def command_line(self, host: str) -> list[str]:
        return list(self.target.entry(self.target.model(), self.component, host)["argv"])

    def override(self, host: str, argv: list[str]) -> None:
        with self.target.changing() as model:
            model["calls"].append(["override", self.component_id(host), list(argv)])
            entry = self.target.entry(model, self.component, host)
            entry["override"] = list(argv)
            if not entry["held"]:
                self.target.start(model, entry, self.component_id(host))

    def restore(self, host: str) -> bool:
        with self.target.changing() as model:
            entry = self.target.entry(model, self.component, host)
            if entry["override"] is None:
                return False
            model["calls"].append(["restore", self.component_id(host)])
            entry["override"] = None
            if not entry["held"]:
                self.target.start(model, entry, self.component_id(host))
            return True

    def restarts(self, host: str) -> int:
        return self.target.entry(self.target.model(), self.component, host)["restarts"]

    def restart_budget_s(self, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        return 1.0

    def held_return_s(self, host: str) -> float:
        return 1.0

    def log_tail(self, host: str, lines: int = 80) -> str:
        return ""

    def sweep(self, host: str) -> list[str]:
        with self.target.changing() as model:
            entry = self.target.entry(model, self.component, host)
            if not (entry["held"] or entry["override"] or entry["state"] == "T"):
                return []
            entry |= {"held": False, "override": None}
            self.target.start(model, entry)
            return [f"restored {self.component_id(host)}"]
