"""The fake target's network (harness/target/network.py): each host's rules and its link are fields of the model, so a
unit test reads what a fault left behind and what its undo removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.target.network import Network

if TYPE_CHECKING:
    from harness.backends.fake.target import FakeTarget


class ModelNetwork(Network):
    target: "FakeTarget"

    def drop(self, host: str, *, sources: list[str] = (), destinations: list[str] = (), tag: str) -> None:  # type: ignore[assignment]
        with self.target.changing() as model:
            rules = model["hosts"][host]["rules"]
            rules += [{"chain": "INPUT", "peer": self._address_of(source), "tag": tag} for source in sources]
            rules += [{"chain": "OUTPUT", "peer": self._address_of(to), "tag": tag} for to in destinations]

    def drop_at_random(self, host: str, probability: float, *, tag: str) -> None:
        with self.target.changing() as model:
            model["hosts"][host]["rules"] += [{"chain": chain, "probability": probability, "tag": tag}
                                              for chain in ("INPUT", "OUTPUT")]

    def heal(self, host: str, tag: str | None = None) -> int:
        with self.target.changing() as model:
            rules = model["hosts"][host]["rules"]
            kept = [r for r in rules if tag is not None and r["tag"] != tag]
            model["hosts"][host]["rules"] = kept
            return len(rules) - len(kept)

    def shape(self, host: str, rate_mbit: float, *, burst_kb: int = 256, latency_ms: int = 50,
              tag: str | None = None) -> None:
        with self.target.changing() as model:
            model["hosts"][host]["link"] = [f"tbf {rate_mbit}", tag]

    def delay(self, host: str, delay_ms: int, jitter_ms: int = 0, *, tag: str | None = None) -> None:
        with self.target.changing() as model:
            model["hosts"][host]["link"] = [f"netem {delay_ms}ms {jitter_ms}ms", tag]

    def restore_link(self, host: str, tag: str | None = None) -> bool:
        with self.target.changing() as model:
            link = model["hosts"][host]["link"]
            if link == self.target.topology.network.link_rate_mbit or (tag is not None and link[1] != tag):
                return False
            model["hosts"][host]["link"] = self.target.topology.network.link_rate_mbit
            return True

    def _address_of(self, host: str) -> str:
        address = self.target.address(host)
        if address is None:
            raise KeyError(f"host {host!r} has no address; hosts: {', '.join(self.target.hosts())}")
        return address
