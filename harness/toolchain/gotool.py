"""Locate a Go toolchain new enough for the Kubernetes release, or fetch one from the Go module proxy.

Go >= 1.21 switches to a newer toolchain by itself (GOTOOLCHAIN=auto downloads golang.org/toolchain
from the module proxy). Debian bookworm only ships Go 1.19, which cannot do that, so when there is no
usable go we fetch the same golang.org/toolchain module zip from the proxy ourselves.
"""

from __future__ import annotations

import io
import os
import platform
import shutil
import subprocess
import zipfile
from pathlib import Path

import requests

from harness.errors import ToolchainError
from harness.toolchain.cache import BinaryCache
from harness.toolchain.versions import Version

GO_FALLBACK = "1.25.8"  # fetched only when the machine has no Go >= 1.21
_GO_SELF_SWITCHING = Version(1, 21, 0)


def goproxy_url() -> str:
    """The first HTTP proxy in GOPROXY (default proxy.golang.org)."""
    for entry in os.environ.get("GOPROXY", "https://proxy.golang.org").replace("|", ",").split(","):
        if entry.startswith("http"):
            return entry.rstrip("/")
    raise ToolchainError(
        f"GOPROXY={os.environ.get('GOPROXY')!r} names no HTTP module proxy",
        "export GOPROXY=https://proxy.golang.org,direct",
    )


def go_version(go: Path) -> Version | None:
    try:
        out = subprocess.run([str(go), "env", "GOVERSION"], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return Version.parse(out.stdout) if out.returncode == 0 and "go" in out.stdout else None


def _arch() -> str:
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def fetch_go(cache: BinaryCache, version: str = GO_FALLBACK) -> Path:
    """Download golang.org/toolchain@v0.0.1-go<version>.linux-<arch> from the module proxy."""
    root = cache.root / "go" / version
    go = root / "bin" / "go"
    if go.exists():
        return go
    url = f"{goproxy_url()}/golang.org/toolchain/@v/v0.0.1-go{version}.linux-{_arch()}.zip"
    try:
        response = requests.get(url, timeout=600)
        response.raise_for_status()
    except requests.RequestException as error:
        raise ToolchainError(
            f"no Go toolchain on this machine and the Go module proxy is unreachable ({error})",
            "check network access to the Go module proxy (GOPROXY), or install Go >= 1.21 and put it on PATH",
        ) from None
    staging = root.with_name(f"{version}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        archive.extractall(staging)
    # the module zip holds golang.org/toolchain@<version>/{bin,src,pkg,...}
    (inner,) = list(staging.iterdir())
    for executable in (inner / "bin").iterdir():
        executable.chmod(0o755)
    for tool in (inner / "pkg" / "tool").glob("*/*"):
        tool.chmod(0o755)
    os.replace(inner, root)
    shutil.rmtree(staging, ignore_errors=True)
    return go


def find_go(cache: BinaryCache) -> Path:
    """A go binary that can build the requested release (switching toolchains by itself if needed)."""
    for candidate in (shutil.which("go"), "/usr/local/go/bin/go", "/usr/lib/go/bin/go"):
        if candidate and Path(candidate).exists():
            version = go_version(Path(candidate))
            if version is not None and version >= _GO_SELF_SWITCHING:
                return Path(candidate)
    return fetch_go(cache)
