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

from harness.components.static_pod import Host, signal_name
from harness.errors import FaultError
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
