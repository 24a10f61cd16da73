"""Shaping a remote host's link without touching what its owner configured. A fault's root qdisc (tbf, netem) goes
only on a link whose root is the kernel's default (handle 0:) or Quorum's own, and Quorum records its handle on the
host first (/var/lib/quorum/shaped-LINK), because tc has no tags: restoring, or `quorum heal --target`'s sweep,
removes a root qdisc only while it carries the handle recorded there, which brings back the kernel's default, as
it was. An owner's root qdisc refuses the fault, naming it."""

from __future__ import annotations

import re

from harness.backends.remote.keepers import FILES
from harness.errors import FaultError
from harness.net import shaping
from harness.target.network import InHostNetwork

LINK = re.compile(r"^[A-Za-z0-9@._-]{1,15}$")  # IFNAMSIZ - 1 characters; it becomes part of a path on the host
ROOT = re.compile(r"qdisc (\S+) ([0-9a-f]+:) root")
KERNEL_DEFAULT = "0:"


class OwnersLinks(InHostNetwork):
    """The in-host network (harness/target/network.py) with shaping that never replaces an owner's qdisc, for a
    target whose hosts are someone else's."""

    def shape(self, host: str, rate_mbit: float, *, burst_kb: int = 256, latency_ms: int = 50,
              tag: str | None = None) -> None:
        link = self._take(host, tag)
        self.target.exec(host, shaping.tbf(link, rate_mbit, burst_kb=burst_kb, latency_ms=latency_ms, tag=tag))

    def delay(self, host: str, delay_ms: int, jitter_ms: int = 0, *, tag: str | None = None) -> None:
        link = self._take(host, tag)
        self.target.exec(host, shaping.netem(link, delay_ms, jitter_ms, tag=tag))

    def restore_link(self, host: str, tag: str | None = None) -> bool:
        """Remove Quorum's root qdisc (only `tag`'s, if given); whether one was removed."""
        link = self._link(host)
        ours = self.target.exec(host, ["cat", self._marker(link)], check=False).strip()
        if not ours:
            return False  # nothing of Quorum's on this link
        current = self._root(host, link)
        if tag is not None and (current is None or current[1] != shaping.handle(tag)):
            return False  # a later fault's shaping, that fault's to undo
        removed = current is not None and current[1] == ours
        if removed:
            self.target.exec(host, ["tc", "qdisc", "del", "dev", link, "root"])
        self.target.exec(host, ["rm", "-f", self._marker(link)])
        return removed

    def _take(self, host: str, tag: str | None) -> str:
        """The link, once its root is the kernel's default or Quorum's, with Quorum's handle recorded first (a heal
        after a crash between the two finds it)."""
        link = self._link(host)
        ours = self.target.exec(host, ["cat", self._marker(link)], check=False).strip()
        current = self._root(host, link)
        if current is not None and current[1] not in (KERNEL_DEFAULT, ours):
            raise FaultError(f"{host}'s link {link} carries a root qdisc its owner configured ({current[0]} "
                             f"{current[1]}): Quorum does not replace a qdisc it did not add",
                             "shape another host, or remove that qdisc yourself if the owner agrees")
        self.target.exec(host, ["mkdir", "-p", "-m", "700", FILES.rstrip("/")])
        self.target.exec(host, ["sh", "-c", 'echo "$1" > "$2"', "sh", shaping.handle(tag), self._marker(link)])
        return link

    def _root(self, host: str, link: str) -> tuple[str, str] | None:
        found = ROOT.search(self.target.exec(host, ["tc", "qdisc", "show", "dev", link, "root"], check=False))
        return (found.group(1), found.group(2)) if found else None

    def _link(self, host: str) -> str:
        link = self.target.link(host)
        if not LINK.match(link):
            raise FaultError(f"{host}'s link is named {link!r}, not an interface name Quorum uses",
                             "check `ip -o addr show` on the host")
        return link

    @staticmethod
    def _marker(link: str) -> str:
        return f"{FILES}shaped-{link}"
