"""What a systemd unit promises after its main process is killed, as `systemctl show` reports it on the host:
whether Restart= restarts it, after which RestartSec= delay (growing towards RestartMaxDelaySec= over RestartSteps=
restarts from systemd 254 on), and whether the start rate limit (StartLimitBurst= starts within
StartLimitIntervalSec=) stops it first. The rules are systemd.service(5) and systemd.unit(5), copied into
docs/target.md."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from harness.errors import QuorumError

PROPERTIES = ("LoadState", "Restart", "RestartUSec", "RestartSteps", "RestartMaxDelayUSec", "StartLimitBurst",
              "StartLimitIntervalUSec", "NRestarts")
# Restart= values under which systemd restarts a service whose main process a signal killed (SIGKILL is unclean)
RESTARTS_AFTER_SIGKILL = frozenset({"always", "on-failure", "on-abnormal", "on-abort"})
# systemd's time span units as format_timespan() prints them, and the spellings a unit file may use
_SPAN_UNITS = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "second": 1.0,
               "seconds": 1.0, "min": 60.0, "m": 60.0, "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0,
               "hour": 3600.0, "hours": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0, "w": 604800.0,
               "week": 604800.0, "weeks": 604800.0, "M": 2629800.0, "month": 2629800.0, "months": 2629800.0,
               "y": 31557600.0, "year": 31557600.0, "years": 31557600.0,
               "": 1e-6}  # a bare number: microseconds, as the *USec properties count
_SPAN_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)")


class UnitUnreadable(QuorumError):
    """`systemctl show` did not describe a loaded unit."""


def timespan_s(text: str) -> float:
    """A systemd time span ("100ms", "1min 30s", "infinity", "0") in seconds."""
    text = text.strip()
    if text == "infinity":
        return math.inf
    total, position = 0.0, 0
    for part in _SPAN_PART.finditer(text):
        unit = part.group(2)
        if text[position:part.start()].strip() or unit not in _SPAN_UNITS:
            raise ValueError(f"not a systemd time span: {text!r}")
        total += float(part.group(1)) * _SPAN_UNITS[unit]
        position = part.end()
    if text[position:].strip() or not text:
        raise ValueError(f"not a systemd time span: {text!r}")
    return total


@dataclass(frozen=True)
class UnitRestartPolicy:
    unit: str
    restart: str              # Restart=
    delay_s: float            # RestartSec=
    steps: int = 0            # RestartSteps= (0: the delay does not grow)
    max_delay_s: float = math.inf  # RestartMaxDelaySec=
    burst: int = 5            # StartLimitBurst=
    interval_s: float = 10.0  # StartLimitIntervalSec= (0: no rate limit)
    restarts: int = 0         # NRestarts: automatic restarts since the unit was last started by hand

    @property
    def restarts_after_kill(self) -> bool:
        return self.restart in RESTARTS_AFTER_SIGKILL

    def delay_before(self, restart: int) -> float:
        """The delay before the unit's `restart`-th automatic restart: RestartSec, growing geometrically to
        RestartMaxDelaySec over RestartSteps restarts (reached at the last step, held after it)."""
        grows = self.steps > 0 and self.delay_s > 0 and self.delay_s < self.max_delay_s < math.inf
        if not grows or restart <= 1:
            return self.delay_s
        if restart > self.steps:
            return self.max_delay_s
        return self.delay_s * (self.max_delay_s / self.delay_s) ** ((restart - 1) / self.steps)

    def rate_limited(self, kills: int, earlier_restarts: int = 0) -> bool:
        """Whether `kills` SIGKILLs in a row, each restarted right after its delay (kills spaced further apart
        only start it less often), ask for more than StartLimitBurst starts within StartLimitIntervalSec: systemd
        then refuses the start and leaves the unit failed."""
        if self.interval_s <= 0 or self.burst <= 0:
            return False
        starts: list[float] = []
        at = 0.0
        for kill in range(1, kills + 1):
            at += self.delay_before(earlier_restarts + kill)
            if sum(1 for earlier in starts if at - earlier < self.interval_s) >= self.burst:
                return True
            starts.append(at)
        return False

    def restart_delay_s(self, kill: int = 1, earlier_restarts: int = 0) -> float:
        """The delay before the unit runs again after the `kill`-th SIGKILL in a row, counting the automatic
        restarts it made before (NRestarts); infinity when systemd does not restart it (Restart= does not cover
        a kill, or the start rate limit stops it)."""
        if not self.restarts_after_kill or self.rate_limited(kill, earlier_restarts):
            return math.inf
        return self.delay_before(earlier_restarts + kill)


def show_command(unit: str) -> list[str]:
    return ["systemctl", "show", "--property=" + ",".join(PROPERTIES), "--", unit]


def parse_show(unit: str, output: str) -> UnitRestartPolicy:
    """The restart policy from `systemctl show --property=...` output (KEY=value lines)."""
    values = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    if values.get("LoadState") != "loaded":
        raise UnitUnreadable(f"systemd has no loaded unit {unit} (LoadState={values.get('LoadState', 'none')})",
                             "name the unit that runs the component in the inventory (components.<name>.unit)")
    try:
        return UnitRestartPolicy(
            unit=unit, restart=values["Restart"], delay_s=timespan_s(values["RestartUSec"]),
            steps=int(values.get("RestartSteps", "0") or 0),
            max_delay_s=timespan_s(values.get("RestartMaxDelayUSec", "infinity") or "infinity"),
            burst=int(values.get("StartLimitBurst", "5")),
            interval_s=timespan_s(values.get("StartLimitIntervalUSec", "10s")),
            restarts=int(values.get("NRestarts", "0") or 0))
    except (KeyError, ValueError) as error:
        raise UnitUnreadable(f"systemctl show {unit} printed what Quorum cannot read ({error}): {output[:300]!r}",
                             "report the systemd version (systemctl --version) with this output") from None
