"""The fake target's hosts as machines (harness/target/power.py): a host's power ("on", "off", "frozen") and its
connection are fields of the model; a host powered off loses its components' pids, and one powered on starts every
component on it that is not held, as a machine's boot would."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.target.power import Power

if TYPE_CHECKING:
    from harness.backends.fake.target import FakeTarget


class ModelPower(Power):
    DISCONNECTS = True

    target: "FakeTarget"

    def off(self, hosts: list[str]) -> None:
        self._set(hosts, "off")

    def on(self, hosts: list[str]) -> None:
        with self.target.changing() as model:
            for host in hosts:
                model["hosts"][host] |= {"power": "on", "connected": True}
                for key, entry in model["components"].items():
                    if key.endswith(f"@{host}") and entry["pid"] is None and not entry["held"]:
                        self.target.start(model, entry)

    def cycle(self, hosts: list[str]) -> None:
        self.off(hosts)
        self.on(hosts)

    def freeze(self, host: str) -> None:
        self._set([host], "frozen")

    def disconnect(self, host: str) -> None:
        with self.target.changing() as model:
            model["hosts"][host]["connected"] = False

    def _set(self, hosts: list[str], power: str) -> None:
        """Record the call, set each host's power, and drop the pids of the components on a host powered off."""
        with self.target.changing() as model:
            model["calls"].append(["power", power, list(hosts)])
            for host in hosts:
                model["hosts"][host]["power"] = power
                for key, entry in model["components"].items():
                    if key.endswith(f"@{host}") and power == "off":
                        entry["pid"] = None
