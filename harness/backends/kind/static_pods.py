"""A kind control plane's components are kubeadm's static pods, run by each control-plane node's kubelet from
/etc/kubernetes/manifests. Keeping one down and changing its command line both go through the kubelet:

- hold: the process is signalled and, in the same command, its manifest leaves the manifest directory, long
  before the kubelet's next look at its containers (it relists them every second), so the kubelet removes the pod
  instead of starting it again; release moves the manifest back (put_back).
- etcd is held by a crash loop instead: the manifest stays and every start the kubelet makes is killed at once,
  as a member that keeps crashing would be. Removing a pod makes the kubelet delete its mirror pod, an API write
  that waits out the apiserver's 34 s timeout while etcd has no quorum, and the kubelet's housekeeping retries it
  before it looks at a returned manifest often enough to delay the member's return by minutes (docs/backends.md).
- override: the manifest's command is replaced (a backup of the original kept in the run directory first);
  restore writes the backup back. The kubelet replaces the pod either way.

A manifest is never edited in place: a hidden file beside it, then a rename (the kubelet never reads half a file).
Every name that reaches a shell here is one of STATIC_PODS, checked before use.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.errors import ClusterError, FaultError

STATIC_PODS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
MANIFESTS = "/etc/kubernetes/manifests"
HELD_PREFIX = "/etc/kubernetes/.quorum-held-"  # a held manifest, outside MANIFESTS: the kubelet ignores it
CRASH_LOOP = ("etcd",)  # held by a crash loop (see above)
LOOP_PREFIX = "/etc/kubernetes/.quorum-crashloop-"  # while this file is there, the loop kills the component
CRASHES_PREFIX = "/etc/kubernetes/.quorum-crashes-"
LOOP_TAG = "qrm-crash-loop-"  # the loop's last argument, what release's pkill -f matches (in no path above)
COMM_LENGTH = 15  # TASK_COMM_LEN - 1: how much of a process name pgrep/pkill can match (proc(5))
SIGNALS = ("SIGKILL", "SIGTERM", "SIGSTOP", "SIGCONT", "SIGINT", "SIGHUP", "SIGQUIT")


def checked(component: str) -> str:
    if component not in STATIC_PODS:
        raise KeyError(f"no static pod {component!r}; static pods: {', '.join(STATIC_PODS)}")
    return component


def process_name(component: str) -> str:
    """The name pgrep and pkill match: the kernel keeps 15 characters (kube-controller-manager is kube-controller)."""
    return checked(component)[:COMM_LENGTH]


def signal_name(signal: str) -> str:
    if signal not in SIGNALS:
        raise FaultError(f"signal {signal!r} is not one Quorum sends", f"use one of {', '.join(SIGNALS)}")
    return signal.removeprefix("SIG")


def held_path(component: str) -> str:
    return f"{HELD_PREFIX}{checked(component)}.yaml"


def loop_flag(component: str) -> str:
    return f"{LOOP_PREFIX}{checked(component)}"


def crashes_path(component: str) -> str:
    """The crash loop's count, kept after release: the container's restarts before the hold (or ?), then a line
    per kill."""
    return f"{CRASHES_PREFIX}{checked(component)}"


def hold(target, node: str, component: str, signal: str, earlier_restarts: int | None = None) -> None:
    manifest = f"{MANIFESTS}/{checked(component)}.yaml"
    kill = f"pkill -{signal_name(signal)} -x {process_name(component)}"
    if component in CRASH_LOOP:
        flag, crashes = loop_flag(component), crashes_path(component)
        counted = f"{kill} && echo >> {crashes}"
        # the loop's last argument names it for release's pkill -f; setsid and closed streams detach it from exec
        script = (f"[ -f {manifest} ] || {{ echo missing; exit 0; }}; "
                  f"echo {'?' if earlier_restarts is None else int(earlier_restarts)} > {crashes}; touch {flag}; "
                  f"{counted}; setsid sh -c 'while [ -f {flag} ]; do {counted}; sleep 0.1; done' "
                  f"{LOOP_TAG}{component} </dev/null >/dev/null 2>&1 & echo held")
    else:
        script = (f"[ -f {manifest} ] || {{ echo missing; exit 0; }}; "
                  f"{kill}; mv -f {manifest} {held_path(component)} && echo held")
    if target.exec(node, ["sh", "-c", script]).strip() != "held":
        raise FaultError(f"{manifest} is not in kind node {node}: its {component} is not a static pod the kubelet "
                         "runs", "quorum heal puts back a manifest an earlier run held; or quorum down and up")


def put_back(target, node: str, held: str) -> list[str]:
    """Move the held manifests matching `held` (HELD_PREFIX and a shell pattern) back into MANIFESTS in `node` by a
    rename; their names.

    The kubelet then starts the pod, not at once: the same manifest returns under the same pod UID (a hash of
    the manifest), so the kubelet's crash-loop back-off for it applies (10 s after the first return, doubling
    up to 5 min, counted from the kill)."""
    if not held.startswith(HELD_PREFIX):
        raise ValueError(f"{held!r} is not a held manifest path")
    script = (f'for held in {held}; do [ -f "$held" ] || continue; name="${{held#{HELD_PREFIX}}}"; '
              f'mv -f "$held" "{MANIFESTS}/$name" && echo "$name"; done')
    return target.exec(node, ["sh", "-c", script]).split()


def end_crash_loop(target, node: str, component: str) -> bool:
    """Stop the loop (its flag gone, the loop killed: no kill after this returns); whether one was running."""
    name = checked(component)
    # [x]yz: the pattern does not match this shell's own command line
    script = (f"[ -f {loop_flag(name)} ] && echo was; rm -f {loop_flag(name)}; "
              f"pkill -f '[{LOOP_TAG[0]}]{LOOP_TAG[1:]}{name}'; true")
    return target.exec(node, ["sh", "-c", script]).strip() == "was"


def crashes(target, node: str, component: str) -> tuple[int | None, int]:
    """The component's restarts before its last crash-loop hold (None: unknown) and the kills during it."""
    lines = target.exec(node, ["cat", crashes_path(component)], check=False).splitlines()
    if not lines:
        return None, 0
    return (int(lines[0]) if lines[0].isdigit() else None), len(lines) - 1


def release(target, node: str, component: str) -> None:
    looping = checked(component) in CRASH_LOOP
    try:
        end_crash_loop(target, node, component) if looping else put_back(target, node, held_path(component))
    except ClusterError as error:
        undo = (f"rm -f {loop_flag(component)}" if looping else f"mv {held_path(component)} {MANIFESTS}/{component}.yaml")
        raise FaultError(f"could not release {component} in kind node {node}: {error}",
                         f"quorum heal, or docker exec {target.container(node)} {undo}") from None


def is_held(target, node: str, component: str) -> bool:
    marker = loop_flag(component) if component in CRASH_LOOP else held_path(component)
    return target.exec(node, ["sh", "-c", f"[ -f {marker} ] && echo yes"], check=False).strip() == "yes"


def manifest(target, node: str, component: str) -> dict:
    text = target.exec(node, ["cat", f"{MANIFESTS}/{checked(component)}.yaml"])
    if not text.strip():
        raise FaultError(f"{MANIFESTS}/{component}.yaml in node {node} is empty",
                         "the cluster is not the one kind created; quorum down and up again")
    return yaml.safe_load(text)


def command_line(target, node: str, component: str) -> list[str]:
    return list(manifest(target, node, component)["spec"]["containers"][0].get("command", []))


def backup_path(target, node: str, component: str) -> Path:
    return target.run_dir / "overrides" / f"{checked(component)}@{node}.yaml"


def override(target, node: str, component: str, argv: list[str]) -> None:
    """The manifest with `argv` as its first container's command; the original is kept first (an earlier
    override's backup is the original, and stays)."""
    original = target.exec(node, ["cat", f"{MANIFESTS}/{checked(component)}.yaml"])
    pod = manifest(target, node, component)
    backup = backup_path(target, node, component)
    if not backup.exists():
        backup.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        backup.write_text(original)  # before the write: a heal restores whatever happens next
    pod["spec"]["containers"][0]["command"] = list(argv)
    target.put_file(node, f"{MANIFESTS}/{component}.yaml", yaml.safe_dump(pod, sort_keys=False))


def restore(target, node: str, component: str) -> bool:
    """Write the original manifest back; whether there was one to restore."""
    backup = backup_path(target, node, component)
    if not backup.exists():
        return False  # never overridden, or restored already
    try:
        target.put_file(node, f"{MANIFESTS}/{component}.yaml", backup.read_text())
    except ClusterError as error:
        raise FaultError(f"could not restore {component}.yaml in node {node}: {error}",
                         f"quorum heal (the original is kept in {backup})") from None
    backup.unlink()
    return True


def sweep(target) -> list[str]:
    """Without a journal: every held manifest goes back and every overridden one is restored."""
    done = []
    for node in target.hosts("controller"):
        try:
            done += [f"put back {name} in {node}" for name in put_back(target, node, f"{HELD_PREFIX}*.yaml")]
            done += [f"ended the crash loop of {component} in {node}" for component in CRASH_LOOP
                     if end_crash_loop(target, node, component)]
        except ClusterError:
            done.append(f"could not look for held manifests in {node} (not running?): quorum heal again once it runs")
        done += [f"restored {component}.yaml in {node}" for component in STATIC_PODS
                 if backup_path(target, node, component).exists() and restore(target, node, component)]
    return done
