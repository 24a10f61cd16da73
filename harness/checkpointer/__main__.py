"""The checkpointer's process on a node (`python3 -m harness.checkpointer`): one pass every few seconds.

It runs twice on each node, as the DaemonSet's pod and as its own checkpoint, which is always active so it runs
before any API does after a reboot; a lock file on the node lets one act at a time, as bootkube's did."""

from __future__ import annotations

import argparse
import fcntl
import os
import signal
import sys
import time
from pathlib import Path

from harness.checkpointer import manifest
from harness.checkpointer.agent import GRACE_S, INTERVAL_S, Agent, Seen
from harness.checkpointer.files import Disk
from harness.checkpointer.node import Api, NodeError, Runtime, local_pods, read_kubeconfig
from harness.checkpointer.state import Checkpoints


def _say(message: str) -> None:
    print(time.strftime("%H:%M:%S ") + message, flush=True)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m harness.checkpointer")
    parser.add_argument("--kubeconfig", type=Path, default=Path("/etc/kubernetes/kubelet.conf"))
    parser.add_argument("--certificate-authority", type=Path, default=Path("/etc/kubernetes/pki/ca.crt"))
    parser.add_argument("--crictl", default="/usr/local/bin/crictl")
    parser.add_argument("--runtime-endpoint", default="unix:///run/containerd/containerd.sock")
    parser.add_argument("--lock-file", type=Path, default=Path("/var/run/lock/quorum-checkpointer.lock"))
    parser.add_argument("--interval", type=float, default=INTERVAL_S, help="seconds between passes")
    parser.add_argument("--grace", type=float, default=GRACE_S,
                        help="seconds a checkpoint is kept after the API deleted its parent")
    parser.add_argument("--never-collect", action="store_true",
                        help="never remove a checkpoint (a broken twin's checkpointer: stale checkpoints stay)")
    parser.add_argument("--never-refresh", action="store_true",
                        help="copy a checkpoint's secrets and config maps only when its pod's spec changed (a broken "
                             "twin's checkpointer: a changed secret is never refreshed)")
    parser.add_argument("--presence-lock", action="store_true",
                        help="lock by the lock file's existence, removed only at a clean exit (a broken twin's "
                             "checkpointer: one killed leaves the lock held for good)")
    parser.add_argument("--root", type=Path, default=Path("/"), help="the node's root (tests give a directory)")
    return parser.parse_args(argv)


def _own_name() -> tuple[str, str]:
    """This node's name and the checkpointer's parent pod (from the downward API): as its checkpoint, the parent
    is the pod its checkpoint-of annotation names."""
    node, namespace, pod = (os.environ.get(key, "") for key in ("NODE_NAME", "POD_NAMESPACE", "POD_NAME"))
    parent = os.environ.get("CHECKPOINT_OF") or pod
    if not node or not namespace or not parent:
        raise NodeError("NODE_NAME, POD_NAMESPACE and POD_NAME must come from the downward API (the DaemonSet sets "
                        "them)")
    manifest.object_name(node, "node name")
    return node, f"{manifest.object_name(namespace, 'namespace')}/{manifest.object_name(parent, 'pod name')}"


def presence_path(lock_file: Path) -> Path:
    """The twin's lock: a file of its own, since a sound checkpointer's flock file stays on the node for good."""
    return lock_file.with_name(lock_file.name + ".held")


def _lock(path: Path, stopping: list[bool], interval: float, presence: bool = False):
    """The open lock file once this process holds the lock, None if it was stopped first. flock: the kernel
    releases the lock when its holder dies, however it dies. `presence` (the twin's): the existence of `path`
    (presence_path) is the lock, which only a clean exit removes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    held = None if presence else open(path, "a")
    while not stopping:
        try:
            if presence:
                return os.fdopen(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "w")
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return held
        except (BlockingIOError, FileExistsError):
            time.sleep(interval)
    return None


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    stopping: list[bool] = []
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.append(True))
    try:
        node, self_name = _own_name()
        api = Api(read_kubeconfig(arguments.kubeconfig, arguments.certificate_authority), node)
        runtime = Runtime(arguments.crictl, arguments.runtime_endpoint)
    except (NodeError, manifest.NotCheckpointable) as error:
        _say(f"cannot start: {error}")
        return 2
    lock_file = presence_path(arguments.lock_file) if arguments.presence_lock else arguments.lock_file
    _say(f"{self_name} on {node}: waiting for {lock_file}")
    lock = _lock(lock_file, stopping, arguments.interval, arguments.presence_lock)
    if lock is None:
        return 0
    _say("holding the lock: checkpointing")
    agent = Agent(Disk(arguments.root), Checkpoints(grace_s=arguments.grace), self_name, api.fetch,
                  collect=not arguments.never_collect, refresh=not arguments.never_refresh)
    while not stopping:
        try:
            pods = api.pods()
            known, running = local_pods(runtime.sandboxes())
            plan = agent.run_once(time.monotonic(), Seen(pods, known, running))
            if plan.stops or plan.removes or set(plan.starts) - {self_name}:  # its own start is every pass's
                _say(f"api {'answered' if pods is not None else 'away'}: start {plan.starts} stop {plan.stops} "
                     f"remove {plan.removes}")
        except (NodeError, manifest.NotCheckpointable, OSError) as error:
            _say(f"pass skipped: {error}")  # the next pass tries again; the node keeps what it has
        time.sleep(arguments.interval)
    lock.close()
    if arguments.presence_lock:
        lock_file.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
