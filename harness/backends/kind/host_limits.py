"""The host's inotify limits, raised before a kind cluster starts.

Every kind node is a privileged container of the host's root user, so the systemd, containerd and kubelet of
every node draw on root's one inotify allowance. At Linux's default of 128 instances a kubelet that cannot get
one exits, and its node never turns Ready (kind's known issue "Pod errors due to too many open files"; its
documented fix is the pair of values below). Limits are only ever raised, and stay raised: lowering them again
under another run's cluster would break that cluster.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import ClusterError

# kind's documented values (kind.sigs.k8s.io, known issues)
INOTIFY_MINIMUMS = {"fs.inotify.max_user_instances": 512, "fs.inotify.max_user_watches": 524288}


def _path(key: str, proc_sys: Path) -> Path:
    return proc_sys / key.replace(".", "/")


def raise_inotify_limits(proc_sys: Path = Path("/proc/sys")) -> list[str]:
    """Raise each limit below its minimum; what was raised ('key old -> new'), empty when nothing was."""
    raised = []
    for key, minimum in INOTIFY_MINIMUMS.items():
        path = _path(key, proc_sys)
        try:
            current = int(path.read_text())
        except (OSError, ValueError) as error:
            raise ClusterError(f"cannot read {key} ({path}): {error}",
                               "kind needs a Linux host with inotify; run Quorum as root on the host") from None
        if current >= minimum:
            continue
        try:
            path.write_text(f"{minimum}\n")
        except OSError as error:
            raise ClusterError(f"{key} is {current}; a kind cluster's nodes need {minimum}, and raising it failed: "
                               f"{error}", f"sysctl -w {key}={minimum} as root on the host, then quorum up again") from None
        raised.append(f"{key} {current} -> {minimum}")
    return raised
