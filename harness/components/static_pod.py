"""Keeping a kubelet's static pod down and changing its command line, on any host a target can run commands on (a
kind node, a kubeadm host over SSH). Both go through the kubelet, which runs whatever manifest is in its directory:

- hold: the process is signalled and, in the same command, its manifest leaves the manifest directory, long
  before the kubelet's next look at its containers (it relists them every second), so the kubelet removes the pod
  instead of starting it again; release puts the manifest back.
- etcd is held by a crash loop instead: the manifest stays and every start the kubelet makes is killed at once,
  as a member that keeps crashing would be. Removing a pod makes the kubelet delete its mirror pod, an API write
  that waits out the apiserver's 34 s timeout while etcd has no quorum, and the kubelet's housekeeping retries it
  before it looks at a returned manifest often enough to delay the member's return by minutes (docs/backends.md).
- override: the original manifest is copied beside Quorum's other files on the host first (so a heal from any
  machine finds it), then the manifest's command is replaced; restore puts the original back.

A manifest is never written in place: a hidden file in its directory (the kubelet ignores names that start with a
dot), then a rename, so the kubelet never reads half a file. Every name that reaches a shell here is one of
STATIC_PODS or a path checked against harness/validation.py's HOST_PATH when the keeper is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import yaml

from harness.errors import ClusterError, FaultError
from harness.validation import HOST_PATH

STATIC_PODS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
CRASH_LOOP = ("etcd",)  # held by a crash loop (see above)
LOOP_TAG = "qrm-crash-loop-"  # the loop's last argument, what release's pkill -f matches (in no path below)
COMM_LENGTH = 15  # TASK_COMM_LEN - 1: how much of a process name pgrep/pkill can match (proc(5))
SIGNALS = ("SIGKILL", "SIGTERM", "SIGSTOP", "SIGCONT", "SIGINT", "SIGHUP", "SIGQUIT")


class Host(Protocol):
    """What the keeper needs of a target: commands in a host, and an atomic file write."""

    def exec(self, host: str, argv: list[str], *, check: bool = True, timeout: float = 60.0) -> str: ...

    def put_file(self, host: str, path: str, text: str) -> None: ...


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


def _sh(target: Host, node: str, script: str, check: bool = True) -> str:
    return target.exec(node, ["sh", "-c", script], check=check)


@dataclass(frozen=True)
class StaticPods:
    """A kubelet's manifest directory and where Quorum keeps what it moved aside on that host (`files`: a path
    prefix: held manifests, originals, the crash loop's flags)."""

    manifests: str
    files: str

    def __post_init__(self) -> None:
        for path in (self.manifests, self.files):
            HOST_PATH.check(path)  # no character a shell reads, as the inventory demands

    def manifest_path(self, component: str) -> str:
        return f"{self.manifests}/{checked(component)}.yaml"

    def held_path(self, component: str) -> str:
        return f"{self.files}held-{checked(component)}.yaml"  # outside the manifest directory: the kubelet ignores it

    def original_path(self, component: str) -> str:
        return f"{self.files}original-{checked(component)}.yaml"

    def loop_flag(self, component: str) -> str:
        return f"{self.files}crashloop-{checked(component)}"  # while this file is there, the loop kills the component

    def crashes_path(self, component: str) -> str:
        """The crash loop's count, kept after release: the container's restarts before the hold (or ?), then a
        line per kill."""
        return f"{self.files}crashes-{checked(component)}"

    def _place(self, source: str, component: str, keep: bool = False) -> str:
        """A script line putting `source` in the manifest directory by a rename from a hidden copy there (the two
        may be on different file systems); the source is removed unless `keep`."""
        hidden = f"{self.manifests}/.{checked(component)}.yaml.quorum"
        return f"cp {source} {hidden} && mv -f {hidden} {self.manifest_path(component)}" + ("" if keep else
                                                                                            f" && rm -f {source}")

    def _mkdir(self) -> str:
        return f"mkdir -p -m 700 {self.files.rsplit('/', 1)[0] or '/'}"

    def hold(self, target: Host, node: str, component: str, signal: str, earlier_restarts: int | None = None) -> None:
        manifest = self.manifest_path(component)
        kill = f"pkill -{signal_name(signal)} -x {process_name(component)}"
        if component in CRASH_LOOP:
            flag, crashes = self.loop_flag(component), self.crashes_path(component)
            counted = f"{kill} && echo >> {crashes}"
            # the loop's last argument names it for release's pkill -f; setsid and closed streams detach it from exec
            script = (f"[ -f {manifest} ] || {{ echo missing; exit 0; }}; {self._mkdir()}; "
                      f"echo {'?' if earlier_restarts is None else int(earlier_restarts)} > {crashes}; touch {flag}; "
                      f"{counted}; setsid sh -c 'while [ -f {flag} ]; do {counted}; sleep 0.1; done' "
                      f"{LOOP_TAG}{component} </dev/null >/dev/null 2>&1 & echo held")
        else:
            script = (f"[ -f {manifest} ] || {{ echo missing; exit 0; }}; {self._mkdir()}; "
                      f"{kill}; mv -f {manifest} {self.held_path(component)} && echo held")
        if _sh(target, node, script).strip() != "held":
            raise FaultError(f"{manifest} is not on {node}: its {component} is not a static pod the kubelet runs there",
                             "quorum heal puts back a manifest an earlier run held; check the manifest directory")

    def put_back(self, target: Host, node: str, component: str) -> bool:
        """Put a held manifest back; whether one was held. The kubelet then starts the pod, not at once: the same
        manifest returns under the same pod UID (a hash of the manifest), so the kubelet's crash-loop back-off for
        it applies (10 s after the first return, doubling up to 5 min, counted from the kill)."""
        held = self.held_path(component)
        return _sh(target, node, f"[ -f {held} ] || exit 0; {self._place(held, component)} && echo back").strip() == "back"

    def end_crash_loop(self, target: Host, node: str, component: str) -> bool:
        """Stop the loop (its flag gone, the loop killed: no kill after this returns); whether one was running."""
        name = checked(component)
        # [x]yz: the pattern does not match this shell's own command line
        script = (f"[ -f {self.loop_flag(name)} ] && echo was; rm -f {self.loop_flag(name)}; "
                  f"pkill -f '[{LOOP_TAG[0]}]{LOOP_TAG[1:]}{name}'; true")
        return _sh(target, node, script).strip() == "was"

    def crashes(self, target: Host, node: str, component: str) -> tuple[int | None, int]:
        """The component's restarts before its last crash-loop hold (None: unknown) and the kills during it."""
        lines = target.exec(node, ["cat", self.crashes_path(component)], check=False).splitlines()
        if not lines:
            return None, 0
        return (int(lines[0]) if lines[0].isdigit() else None), len(lines) - 1

    def release(self, target: Host, node: str, component: str) -> bool:
        """End the hold, whichever way it was made; whether there was one."""
        looping = checked(component) in CRASH_LOOP
        try:
            return self.end_crash_loop(target, node, component) if looping else self.put_back(target, node, component)
        except ClusterError as error:
            undo = (f"rm -f {self.loop_flag(component)}" if looping else
                    f"mv {self.held_path(component)} {self.manifest_path(component)}")
            raise FaultError(f"could not release {component} on {node}: {error}",
                             f"quorum heal, or on {node}: {undo}") from None

    def is_held(self, target: Host, node: str, component: str) -> bool:
        marker = self.loop_flag(component) if component in CRASH_LOOP else self.held_path(component)
        return _sh(target, node, f"[ -f {marker} ] && echo yes", check=False).strip() == "yes"

    def manifest(self, target: Host, node: str, component: str) -> dict:
        text = target.exec(node, ["cat", self.manifest_path(component)])
        if not text.strip():
            raise FaultError(f"{self.manifest_path(component)} on {node} is empty",
                             "the kubelet runs no such pod there: check the manifest directory")
        return yaml.safe_load(text)

    def command_line(self, target: Host, node: str, component: str) -> list[str]:
        return list(self.manifest(target, node, component)["spec"]["containers"][0].get("command", []))

    def override(self, target: Host, node: str, component: str, argv: list[str]) -> None:
        """The manifest with `argv` as its first container's command; the original is kept first, on the host (an
        earlier override's copy is the original, and stays)."""
        pod = self.manifest(target, node, component)
        original = self.original_path(component)
        _sh(target, node, f"{self._mkdir()}; [ -f {original} ] || cp -p {self.manifest_path(component)} {original}")
        pod["spec"]["containers"][0]["command"] = list(argv)
        target.put_file(node, self.manifest_path(component), yaml.safe_dump(pod, sort_keys=False))

    def restore(self, target: Host, node: str, component: str) -> bool:
        """Put the original manifest back; whether there was one to restore."""
        original = self.original_path(component)
        try:
            return _sh(target, node, f"[ -f {original} ] || exit 0; {self._place(original, component)} && echo done"
                       ).strip() == "done"
        except ClusterError as error:
            raise FaultError(f"could not restore {component}.yaml on {node}: {error}",
                             f"quorum heal (the original is kept on {node} in {original})") from None

    def sweep(self, target: Host, node: str, components: tuple[str, ...] = STATIC_PODS) -> list[str]:
        """Without a journal: every held manifest goes back, every crash loop ends, every overridden manifest is
        restored."""
        done = [f"put back {c}.yaml on {node}" for c in components if self.put_back(target, node, c)]
        done += [f"ended the crash loop of {c} on {node}" for c in components
                 if c in CRASH_LOOP and self.end_crash_loop(target, node, c)]
        return done + [f"restored {c}.yaml on {node}" for c in components if self.restore(target, node, c)]
