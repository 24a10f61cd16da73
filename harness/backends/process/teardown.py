"""Removing a supervised cluster from the machine: keepers and what lives in the run's namespaces, then the
namespaces, veths, bridge and firewall rules, in the order GOTCHAS.md requires."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from harness.backends.process import cpu_limit
from harness.errors import ClusterError
from harness.net import netns
from harness.run.state import RunState
from harness.shell import run
from harness.wait import until

STOP_TIMEOUT_S = 15.0
SUPERVISOR = b"harness.backends.process.supervisor"


def pids_in(netns_names: list[str]) -> set[int]:
    pids: set[int] = set()
    present = set(netns.list_netns())
    for name in netns_names:
        if name in present:
            pids |= {int(p) for p in run(["ip", "netns", "pids", name], check=False).split()}
    return pids


def keeper_pids(run_dir: Path | None = None) -> set[int]:
    """Supervisor processes (of one run directory, or of any run)."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 4 and argv[1:3] == [b"-m", SUPERVISOR]:
            if run_dir is None or argv[3].decode(errors="replace").startswith(str(run_dir)):
                found.add(int(proc.name))
    return found


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def _wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    left = set(pids)

    def all_gone() -> bool:
        left.intersection_update({pid for pid in left if Path(f"/proc/{pid}").exists() and not _is_zombie(pid)})
        return not left

    until(all_gone, timeout_s, 0.05)
    return left


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def stop_processes(keepers: set[int], netns_names: list[str]) -> None:
    """Stop keepers (they restart nothing after SIGTERM) and kill what lives in the namespaces. A torn-down
    cluster keeps nothing of its processes, so they get no graceful stop: an apiserver's shutdown delay would only
    hold the teardown (docs/ci.md)."""
    members = pids_in(netns_names)
    _signal_all(keepers, signal.SIGTERM)
    _signal_all(members, signal.SIGKILL)
    left = _wait_gone(keepers | members, STOP_TIMEOUT_S / 3)
    _signal_all(left | pids_in(netns_names), signal.SIGKILL)
    left = _wait_gone(left | pids_in(netns_names), STOP_TIMEOUT_S)
    if left:
        raise ClusterError(f"processes {sorted(left)} did not exit after SIGKILL", "check them with ps; then quorum down --all")


def teardown(state: RunState, *, own_bridge: bool = True) -> list[str]:
    """The run's processes, namespaces, veths, firewall rules and (own_bridge) its bridge. Idempotent."""
    stop_processes(keeper_pids(Path(state.run_dir)), state.netns)
    removed = netns.teardown(state.run_id, netns=state.netns, veths=state.veths,
                             bridge=state.bridge if own_bridge else None, rules=state.iptables)
    return removed + cpu_limit.remove(state.run_id)


def leftovers() -> list[str]:
    """Namespaces, keepers, veths, bridges and rules of any run (`quorum down --all`)."""
    leftover_ns = [n for n in netns.list_netns() if n.startswith(netns.PREFIX_NETNS)]
    stop_processes(keeper_pids(), leftover_ns)
    links = run(["ip", "-o", "link", "show"], check=False).splitlines()
    names = [line.split(": ")[1].split("@")[0] for line in links if ": " in line]
    removed = netns.teardown("*", netns=leftover_ns, veths=[n for n in names if n.startswith(netns.PREFIX_VETH)],
                             bridge=None, rules=netns.leftover_rules())
    for bridge in [n for n in names if n.startswith(netns.PREFIX_BRIDGE)]:
        run(["ip", "link", "del", bridge], check=False)
        removed.append(f"bridge {bridge}")
    return removed + cpu_limit.remove()
