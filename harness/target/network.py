"""The network half of the target protocol as most targets do it: tagged iptables rules and tc qdiscs inside each
host, reached through the target's `exec`. A target whose hosts are reached otherwise overrides these."""

from __future__ import annotations

from harness.net import firewall, shaping
from harness.target.capabilities import Capability


class InHostNetwork:
    """Needs, from the target: exec, address, link, hosts, name, require."""

    def drop(self, host: str, *, sources: list[str] = (), destinations: list[str] = (), tag: str) -> None:  # type: ignore[assignment]
        """Inside `host`, drop packets from the hosts `sources` and to the hosts `destinations`; rules tagged."""
        self.require(Capability.NETWORK)
        rules = ([("INPUT", ["-s", self._address_of(source)]) for source in sources]
                 + [("OUTPUT", ["-d", self._address_of(destination)]) for destination in destinations])
        firewall.add_all(self._run(host), rules, tag)

    def drop_at_random(self, host: str, probability: float, *, tag: str) -> None:
        """Drop a random fraction of the packets on the host's link, both directions."""
        self.require(Capability.NETWORK)
        link = self.link(host)
        firewall.add(self._run(host), "INPUT", ["-i", link, *firewall.random(probability)], tag)
        firewall.add(self._run(host), "OUTPUT", ["-o", link, *firewall.random(probability)], tag)

    def heal_network(self, host: str, tag: str | None = None) -> int:
        """Remove the rules tagged `tag` (every Quorum fault's rules if None) inside `host`; how many."""
        return firewall.remove(self._run(host), tag)

    def shape(self, host: str, rate_mbit: float, *, burst_kb: int = 256, latency_ms: int = 50,
              tag: str | None = None) -> None:
        """Limit what `host` sends on its link (tbf), as the shaping of `tag` (a fault's id)."""
        self.require(Capability.SHAPE)
        self.exec(host, shaping.tbf(self.link(host), rate_mbit, burst_kb=burst_kb, latency_ms=latency_ms, tag=tag))

    def delay(self, host: str, delay_ms: int, jitter_ms: int = 0, *, tag: str | None = None) -> None:
        """Delay what `host` sends on its link (netem, where the kernel has it), as the shaping of `tag`."""
        self.require(Capability.SHAPE)
        self.exec(host, shaping.netem(self.link(host), delay_ms, jitter_ms, tag=tag))

    def restore_link(self, host: str, tag: str | None = None) -> bool:
        """Back to the cluster's own link (what healthy means on this target); whether anything changed. With a
        tag, only while the link carries that shaping: a later fault's is that fault's to undo."""
        show = self.exec(host, ["tc", "qdisc", "show", "dev", self.link(host), "root"], check=False)
        current = shaping.root(show)
        if tag is not None and (current is None or current[1] != shaping.handle(tag)):
            return False
        baseline = self.baseline_link_mbit(host)
        if baseline:
            if current == ("tbf", shaping.BASELINE):
                return False
            self.exec(host, shaping.tbf(self.link(host), baseline))
            return True
        if current is None:
            return False
        self.exec(host, ["tc", "qdisc", "del", "dev", self.link(host), "root"], check=False)
        return True

    def baseline_link_mbit(self, host: str) -> float | None:
        """The rate the cluster's own configuration shapes `host`'s link to (None: unshaped)."""
        return None

    def _run(self, host: str):
        return lambda argv, check=True: self.exec(host, argv, check=check)

    def _address_of(self, host: str) -> str:
        address = self.address(host)
        if address is None:
            raise KeyError(f"host {host!r} has no address (down, or not a host of {self.name}); "
                           f"hosts: {', '.join(self.hosts())}")
        return address
