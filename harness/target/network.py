"""The network as one part of a Target (Jepsen's Net): packets dropped between hosts or at random on a host's link,
a link's rate limited or delayed, and each undone by the fault's tag. The faults in harness/faults/network.py never
know how a rule reaches a host.

`InHostNetwork` is how most targets do it: tagged iptables rules and tc qdiscs inside each host, reached through
the target's `exec`. A target whose links are someone else's subclasses it (harness/backends/remote/links.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from harness.net import firewall, shaping
from harness.target.capabilities import Capability

if TYPE_CHECKING:
    from harness.target.protocol import Target


class Network(ABC):
    def __init__(self, target: Any) -> None:
        """Built by its target on first use (Target.network), with the target to act through."""
        self.target = target

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        """What a target with this part can do to packets and links."""
        return frozenset({Capability.NETWORK, Capability.SHAPE})

    @abstractmethod
    def drop(self, host: str, *, sources: list[str] = (), destinations: list[str] = (), tag: str) -> None:  # type: ignore[assignment]
        """Inside `host`, drop packets from the hosts `sources` and to the hosts `destinations`; rules tagged."""

    @abstractmethod
    def drop_at_random(self, host: str, probability: float, *, tag: str) -> None:
        """Drop a random fraction of the packets on the host's link, both directions."""

    @abstractmethod
    def heal(self, host: str, tag: str | None = None) -> int:
        """Remove the rules tagged `tag` (every Quorum fault's rules if None) inside `host`; how many."""

    @abstractmethod
    def shape(self, host: str, rate_mbit: float, *, burst_kb: int = 256, latency_ms: int = 50,
              tag: str | None = None) -> None:
        """Limit what `host` sends on its link (tbf), as the shaping of `tag` (a fault's id)."""

    @abstractmethod
    def delay(self, host: str, delay_ms: int, jitter_ms: int = 0, *, tag: str | None = None) -> None:
        """Delay what `host` sends on its link (netem, where the kernel has it), as the shaping of `tag`."""

    @abstractmethod
    def restore_link(self, host: str, tag: str | None = None) -> bool:
        """Back to the cluster's own link (what healthy means on this target); whether anything changed. With a
        tag, only while the link carries that shaping: a later fault's is that fault's to undo."""


class InHostNetwork(Network):
    """Rules and qdiscs inside the hosts. Needs, from the target: exec, address, link, hosts, name and
    baseline_link_mbit (the rate its own configuration shapes a link to)."""

    target: "Target"

    def drop(self, host: str, *, sources: list[str] = (), destinations: list[str] = (), tag: str) -> None:  # type: ignore[assignment]
        rules = ([("INPUT", ["-s", self._address_of(source)]) for source in sources]
                 + [("OUTPUT", ["-d", self._address_of(destination)]) for destination in destinations])
        firewall.add_all(self._run(host), rules, tag)

    def drop_at_random(self, host: str, probability: float, *, tag: str) -> None:
        link = self.target.link(host)
        firewall.add(self._run(host), "INPUT", ["-i", link, *firewall.random(probability)], tag)
        firewall.add(self._run(host), "OUTPUT", ["-o", link, *firewall.random(probability)], tag)

    def heal(self, host: str, tag: str | None = None) -> int:
        return firewall.remove(self._run(host), tag)

    def shape(self, host: str, rate_mbit: float, *, burst_kb: int = 256, latency_ms: int = 50,
              tag: str | None = None) -> None:
        self.target.exec(host, shaping.tbf(self.target.link(host), rate_mbit, burst_kb=burst_kb,
                                           latency_ms=latency_ms, tag=tag))

    def delay(self, host: str, delay_ms: int, jitter_ms: int = 0, *, tag: str | None = None) -> None:
        self.target.exec(host, shaping.netem(self.target.link(host), delay_ms, jitter_ms, tag=tag))

    def restore_link(self, host: str, tag: str | None = None) -> bool:
        link = self.target.link(host)
        current = shaping.root(self.target.exec(host, ["tc", "qdisc", "show", "dev", link, "root"], check=False))
        if tag is not None and (current is None or current[1] != shaping.handle(tag)):
            return False
        baseline = self.target.baseline_link_mbit(host)
        if baseline:
            if current == ("tbf", shaping.BASELINE):
                return False
            self.target.exec(host, shaping.tbf(link, baseline))
            return True
        if current is None:
            return False
        self.target.exec(host, ["tc", "qdisc", "del", "dev", link, "root"], check=False)
        return True

    def _run(self, host: str):
        return lambda argv, check=True: self.target.exec(host, argv, check=check)

    def _address_of(self, host: str) -> str:
        address = self.target.address(host)
        if address is None:
            raise KeyError(f"host {host!r} has no address (down, or not a host of {self.target.name}); "
                           f"hosts: {', '.join(self.target.hosts())}")
        return address
