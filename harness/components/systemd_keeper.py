"""Keeping a systemd unit down and changing its command line, on a host a target runs commands on:

- hold: a marker file first (so a heal from any machine knows to start it again), then the main process gets the
  fault's signal and `systemctl stop` cancels the restart systemd would schedule; release starts the unit
  (`--no-block`: an etcd unit of Type=notify would otherwise wait for a quorum the heal may still be giving back).
- override: a runtime drop-in (/run/systemd/system/UNIT.d/, gone at the next boot, so a host that reboots mid-fault
  comes back as its owner configured it) clears ExecStart= and sets the new command line; restore removes it.
  Both reload systemd and restart the unit.

Unit names are checked against UNIT before they reach a shell; each argument of a command line is quoted as
systemd.service(5) reads ExecStart= (double quotes, backslash escapes, %% and $$ for literal % and $).
"""

from __future__ import annotations

from collections.abc import Callable

from harness.components.static_pod import Host, signal_name
from harness.components.systemd_unit import UnitRestartPolicy, parse_show, show_command
from harness.errors import FaultError
from harness.target.keeper import Keeper
from harness.thresholds import STARTUP_ALLOWANCE_S
from harness.topology import Component
from harness.validation import UNIT

DROP_IN = "zz-quorum-override.conf"  # sorts last, so its ExecStart= wins over the owner's drop-ins


def checked(unit: str) -> str:
    if not UNIT.matches(unit):  # as the inventory demands
        raise KeyError(f"{unit!r} is not a systemd service name")
    return unit


def exec_start_argument(argument: str) -> str:
    """One argument as ExecStart= reads it back unchanged."""
    if any(ord(c) < 32 for c in argument):
        raise FaultError(f"{argument[:60]!r} holds a control character, which a unit file cannot carry",
                         "override the command line without newlines or tabs in an argument")
    escaped = argument.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def drop_in_text(argv: list[str]) -> str:
    if not argv:
        raise FaultError("an override needs a command line", "give the executable and its flags")
    return ("# written by Quorum for a flag-override fault; `quorum heal --target` removes it\n"
            "[Service]\nExecStart=\nExecStart=" + " ".join(exec_start_argument(a) for a in argv) + "\n")


class SystemdUnits:
    """A host's systemd units; `files` is where Quorum keeps its markers on that host (a path prefix)."""

    def __init__(self, files: str) -> None:
        self.files = files

    def held_marker(self, unit: str) -> str:
        return f"{self.files}held-{checked(unit)}"

    @staticmethod
    def drop_in(unit: str) -> str:
        return f"/run/systemd/system/{checked(unit)}.d/{DROP_IN}"

    def hold(self, target: Host, node: str, unit: str, signal: str = "SIGKILL") -> None:
        signal_name(signal)  # one Quorum sends, or a FaultError naming them
        loaded = f'[ "$(systemctl show --property=LoadState --value -- {checked(unit)})" = loaded ]'
        script = (f"{loaded} || {{ echo missing; exit 0; }}; mkdir -p -m 700 {self.files.rsplit('/', 1)[0]}; "
                  f"touch {self.held_marker(unit)}; systemctl kill --signal={signal} -- {unit}; "
                  f"systemctl stop -- {unit}; echo held")
        if target.exec(node, ["sh", "-c", script]).strip() != "held":
            raise FaultError(f"systemd on {node} has no unit {unit}", "check the unit named in the inventory")

    def release(self, target: Host, node: str, unit: str) -> bool:
        """Start the unit again; whether it was held."""
        marker = self.held_marker(unit)
        script = f"[ -f {marker} ] || exit 0; systemctl start --no-block -- {unit} && rm -f {marker} && echo released"
        return target.exec(node, ["sh", "-c", script]).strip() == "released"

    def is_held(self, target: Host, node: str, unit: str) -> bool:
        return target.exec(node, ["sh", "-c", f"[ -f {self.held_marker(unit)} ] && echo yes"],
                           check=False).strip() == "yes"

    def override(self, target: Host, node: str, unit: str, argv: list[str]) -> None:
        text = drop_in_text(argv)
        target.exec(node, ["mkdir", "-p", self.drop_in(unit).rsplit("/", 1)[0]])
        target.put_file(node, self.drop_in(unit), text)
        target.exec(node, ["sh", "-c", f"systemctl daemon-reload && systemctl restart --no-block -- {checked(unit)}"])

    def restore(self, target: Host, node: str, unit: str) -> bool:
        """Remove the override and restart the unit as its owner configured it; whether there was one."""
        drop_in = self.drop_in(unit)
        script = (f"[ -f {drop_in} ] || exit 0; rm -f {drop_in} && systemctl daemon-reload && "
                  f"systemctl restart --no-block -- {unit} && echo restored")
        return target.exec(node, ["sh", "-c", script]).strip() == "restored"

    def sweep(self, target: Host, node: str, units: list[str]) -> list[str]:
        done = [f"removed the override of {unit} on {node}" for unit in units if self.restore(target, node, unit)]
        return done + [f"started {unit} on {node}" for unit in units if self.release(target, node, unit)]


class SystemdKeeper(Keeper):
    """systemd as a component's keeper (harness/target/keeper.py): the unit's holds and drop-ins above, and what
    its restart policy promises as `systemctl show` reads it on each host (a unit may be configured otherwise on
    one host). `component_hosts()`: the hosts that run it, for the promise that holds on all of them."""

    def __init__(self, hosts: Host, units: SystemdUnits, component: Component, unit: str,
                 component_hosts: Callable[[], list[str]]) -> None:
        self.hosts = hosts
        self.units = units
        self.component = component
        self.unit = checked(unit)
        self.component_hosts = component_hosts

    def policy(self, host: str) -> UnitRestartPolicy:
        return parse_show(self.unit, self.hosts.exec(host, show_command(self.unit)))

    def hold(self, host: str, signal: str = "SIGKILL") -> None:
        self.units.hold(self.hosts, host, self.unit, signal)

    def release(self, host: str) -> bool:
        return self.units.release(self.hosts, host, self.unit)

    def held(self, host: str) -> bool:
        return self.units.is_held(self.hosts, host, self.unit)

    def command_line(self, host: str) -> None:
        """None: the unit's ExecStart= may wrap the component (a script, an environment file), so the live
        command line is the configured one."""
        return None

    def override(self, host: str, argv: list[str]) -> None:
        self.units.override(self.hosts, host, self.unit, argv)

    def restore(self, host: str) -> bool:
        return self.units.restore(self.hosts, host, self.unit)

    def restarts(self, host: str) -> int:
        """The unit's NRestarts."""
        return self.policy(host).restarts

    def restart_budget_s(self, *, kill: int = 1, earlier_restarts: int = 0) -> float:
        """The slowest host's delay before that restart (RestartSec=, its steps, the start rate limit), plus the
        component's start-up allowance."""
        delays = [self.policy(host).restart_delay_s(kill, earlier_restarts) for host in self.component_hosts()]
        return max(delays, default=0.0) + STARTUP_ALLOWANCE_S[self.component]

    def held_return_s(self, host: str) -> float:
        """A released unit is started at once: its start-up allowance."""
        return STARTUP_ALLOWANCE_S[self.component]

    def log_tail(self, host: str, lines: int = 80) -> str:
        return self.hosts.exec(host, ["journalctl", "--no-pager", "-u", self.unit, "-n", str(int(lines))], check=False)

    def sweep(self, host: str) -> list[str]:
        return self.units.sweep(self.hosts, host, [self.unit])
