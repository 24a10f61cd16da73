"""Whole hosts as machines: power off and on, freeze, a power cycle of several at once, and (where the target owns
the hosts' network) a removed interface. It is one part of a Target (Jepsen's Kill and Pause: the faults in
harness/faults/node.py never know how a host loses power). A backend whose hosts are containers or machines it
controls gives its Target a Power part; NODE_POWER and NODE_DISCONNECT follow from that part, never from a list
kept by hand."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from harness.errors import Unsupported
from harness.target.capabilities import Capability


class Power(ABC):
    DISCONNECTS: ClassVar[bool] = False  # whether `disconnect` is offered (Capability.NODE_DISCONNECT)

    def __init__(self, target: Any) -> None:
        """Built by its target on first use (Target.power), with the target to act through."""
        self.target = target

    @classmethod
    def capabilities(cls) -> frozenset[Capability]:
        """What a target with this part can do to whole hosts."""
        return frozenset({Capability.NODE_POWER} | ({Capability.NODE_DISCONNECT} if cls.DISCONNECTS else set()))

    @abstractmethod
    def off(self, hosts: list[str]) -> None:
        """Power off each host at once: the host and every process on it vanish."""

    @abstractmethod
    def on(self, hosts: list[str]) -> None:
        """Every host in `hosts` running, unfrozen and connected again, with its address (idempotent)."""

    @abstractmethod
    def cycle(self, hosts: list[str]) -> None:
        """Power loss of every host at once, then all started again: what comes back is what is on disk."""

    @abstractmethod
    def freeze(self, host: str) -> None:
        """Stop every process of the host at once (cgroup freezer); its sockets stay open."""

    def disconnect(self, host: str) -> None:
        """Remove the host's network interface while its processes run on (DISCONNECTS); a part that cannot is
        refused with the capability's name, as any capability a target lacks."""
        self.target.require(Capability.NODE_DISCONNECT)
        raise Unsupported(f"{type(self).__name__} cannot remove a host's network interface",
                          "run the fault on a backend whose hosts' network Quorum owns (docker)")
