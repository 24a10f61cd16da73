"""Build binaries with Go from the module proxy: Kubernetes via a wrapper module, others via go install."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from harness.errors import ToolchainError
from harness.toolchain.cache import BinaryCache
from harness.toolchain.gomod import version_ldflags, wrapper_gomod
from harness.toolchain.progress import Step
from harness.toolchain.versions import Version

_NETWORK_HINTS = ("dial tcp", "no such host", "connection refused", "i/o timeout", "TLS handshake")


def go_env(go: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{go.parent}:{env.get('PATH', '')}"
    env["CGO_ENABLED"] = "0"  # static binaries that run in any namespace or container image
    env["GOFLAGS"] = "-mod=mod -buildvcs=false"
    env.setdefault("GOTOOLCHAIN", "auto")
    return env


def run_go(go: Path, args: list[str], *, cwd: Path, step: Step, label: str, env: dict[str, str] | None = None) -> str:
    """Run go, streaming its output into the progress step; raise ToolchainError with the tail on failure."""
    lines: collections.deque[str] = collections.deque(maxlen=40)
    compiled = 0
    process = subprocess.Popen(
        [str(go), *args], cwd=cwd, env=env or go_env(go), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    output = []
    for line in process.stdout:
        line = line.rstrip()
        lines.append(line)
        output.append(line)
        if line.startswith("go: downloading"):
            step.update(f"{label}: downloading {line.split()[2]}")
        elif line and " " not in line:  # `go build -v` prints one package path per compiled package
            compiled += 1
            step.update(f"{label}: {compiled} packages compiled")
    code = process.wait()
    if code != 0:
        tail = "\n".join(lines)
        if any(hint in tail for hint in _NETWORK_HINTS):
            fix = "make the Go module proxy reachable (check GOPROXY and the network), then run `quorum toolchain install` again"
        elif "no space left" in tail.lower():
            fix = f"free disk space under {cwd} and the Go caches (`go env GOMODCACHE GOCACHE`), then retry"
        else:
            fix = "read the Go output above; `quorum toolchain install` resumes where it stopped"
        raise ToolchainError(f"`go {' '.join(args[:3])} …` failed for {label}:\n{tail}", fix)
    return "\n".join(output)


def kubernetes_gomod(go: Path, version: Version, step: Step) -> str:
    """k8s.io/kubernetes's own go.mod for a release, fetched from the module proxy."""
    with tempfile.TemporaryDirectory() as empty:
        out = run_go(go, ["mod", "download", "-json", f"k8s.io/kubernetes@{version}"], cwd=Path(empty), step=step,
                     label="k8s.io/kubernetes", env={**go_env(go), "GOFLAGS": ""})
    try:
        info = json.loads(out[out.index("{"):])
    except ValueError:
        raise ToolchainError(f"unexpected `go mod download` output:\n{out[-2000:]}") from None
    if "Error" in info:
        raise ToolchainError(
            f"k8s.io/kubernetes@{version} is not available from the module proxy: {info['Error']}",
            "pick a published release (`go list -m -versions k8s.io/kubernetes`)",
        )
    return Path(info["GoMod"]).read_text()


def prepare_wrapper(go: Path, cache: BinaryCache, version: Version, step: Step) -> Path:
    work = cache.work_dir(f"kubernetes-{version}")
    gomod = wrapper_gomod(kubernetes_gomod(go, version, step), version)
    target = work / "go.mod"
    if not target.exists() or target.read_text() != gomod:
        target.write_text(gomod)
        (work / "go.sum").unlink(missing_ok=True)
    return work


def build_kubernetes_binary(go: Path, wrapper: Path, version: Version, name: str, output: Path, step: Step) -> None:
    build_date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    ldflags = version_ldflags(version, build_date=build_date)
    run_go(go, ["build", "-v", "-trimpath", "-ldflags", ldflags, "-o", str(output), f"k8s.io/kubernetes/cmd/{name}"],
           cwd=wrapper, step=step, label=name)


def go_install(go: Path, package: str, version: str, output: Path, step: Step, ldflags: str = "-s -w") -> None:
    """`go install package@version` into a scratch GOBIN, then move the binary to `output`."""
    with tempfile.TemporaryDirectory(dir=output.parent) as gobin:
        env = {**go_env(go), "GOBIN": gobin, "GOFLAGS": "-buildvcs=false"}
        run_go(go, ["install", "-v", "-trimpath", "-ldflags", ldflags, f"{package}@{version}"],
               cwd=Path(gobin), step=step, label=package.rsplit("/", 1)[-1], env=env)
        (built,) = list(Path(gobin).iterdir())
        shutil.move(str(built), output)


def build_in_wrapper(go: Path, work: Path, modules: tuple[str, ...], package: str, output: Path, step: Step) -> None:
    """`go build package` inside a wrapper module that requires every module@version in `modules`: for
    projects whose modules replace each other with ../ paths (go install refuses those)."""
    gomod = work / "go.mod"
    wanted = f"module quorum.local/{work.name}\n\ngo 1.23\n"
    pinned = work / "pins.txt"
    if not gomod.exists() or not pinned.exists() or pinned.read_text() != "\n".join(modules):
        gomod.write_text(wanted)
        (work / "go.sum").unlink(missing_ok=True)
        run_go(go, ["get", *modules], cwd=work, step=step, label=package.rsplit("/", 2)[-2])
        pinned.write_text("\n".join(modules))
    run_go(go, ["build", "-v", "-trimpath", "-ldflags", "-s -w", "-o", str(output), package], cwd=work, step=step,
           label=package.rsplit("/", 2)[-2])
