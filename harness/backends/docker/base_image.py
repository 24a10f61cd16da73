"""The node base image: a Debian rootfs made with debootstrap and imported into Docker.

What a node needs (systemd, containerd, runc, CNI plugins, iptables, iproute2) plus Quorum's host tools
(haproxy and iperf3 from Debian, etcd and etcdctl from the toolchain) and python3 for the supervisor.
The tag is a hash of the recipe (suite, package list, etcd version, recipe revision), so the same
recipe is built once and found again; a changed recipe gets a new tag. The rootfs itself is not
bit-for-bit reproducible (debootstrap writes timestamps), the package set is.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from python_on_whales.exceptions import DockerException

from harness.backends.docker.engine import Engine
from harness.errors import QuorumError
from harness.toolchain.install import Toolchain
from harness.toolchain.versions import ETCD_VERSION

REPOSITORY = "quorum/node-base"
RECIPE_REVISION = 1
SUITE = "bookworm"
PACKAGES = (
    "systemd", "systemd-sysv", "dbus", "containerd", "runc", "containernetworking-plugins", "iptables",
    "iproute2", "iputils-ping", "procps", "kmod", "ca-certificates", "haproxy", "iperf3", "python3",
)
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEBOOTSTRAP_TIMEOUT_S = 900


class ImageBuildError(QuorumError):
    """An image could not be built."""


@dataclass(frozen=True)
class Recipe:
    suite: str = SUITE
    packages: tuple[str, ...] = PACKAGES
    etcd: str = ETCD_VERSION
    revision: int = RECIPE_REVISION

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]

    @property
    def tag(self) -> str:
        return f"{REPOSITORY}:{self.digest}"


def debian_mirror(sources: Path = Path("/etc/apt/sources.list.d/debian.sources")) -> str:
    """The mirror apt already uses (the one this machine can reach), else Debian's default."""
    if sources.exists():
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split()[1]
    legacy = Path("/etc/apt/sources.list")
    if legacy.exists():
        for line in legacy.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "deb" and "security" not in parts[1]:
                return parts[1]
    return DEFAULT_MIRROR


def exists(engine: Engine, recipe: Recipe = Recipe()) -> bool:
    return engine.client.image.exists(recipe.tag)


def build(engine: Engine, recipe: Recipe = Recipe(), say=lambda _: None) -> tuple[str, float]:
    """The image's tag and the seconds its build took (0.0 when it was already there)."""
    if exists(engine, recipe):
        return recipe.tag, 0.0
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("debootstrap is not installed", "quorum toolchain install   (or apt-get install debootstrap)")
    toolchain = Toolchain()
    etcd_binaries = [toolchain.path(name) for name in ("etcd", "etcdctl")]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="quorum-rootfs-") as work:
        rootfs = Path(work) / "rootfs"
        mirror = debian_mirror()
        say(f"debootstrap {recipe.suite} from {mirror} ({len(recipe.packages)} packages)")
        command = ["debootstrap", "--variant=minbase", f"--include={','.join(recipe.packages)}", recipe.suite,
                   str(rootfs), mirror]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=DEBOOTSTRAP_TIMEOUT_S)
        except subprocess.TimeoutExpired as error:
            raise ImageBuildError(f"debootstrap did not finish within {DEBOOTSTRAP_TIMEOUT_S:.0f} s",
                                  f"check that {mirror} is reachable and fast enough (apt-get update), then "
                                  "quorum images build") from error
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-8:])
            raise ImageBuildError(f"debootstrap failed:\n{tail}",
                                  f"check that {mirror} is reachable (apt-get update) and the disk has space")
        _finish_rootfs(rootfs, etcd_binaries)
        archive = Path(work) / "rootfs.tar"
        say(f"importing {recipe.tag}")
        # numeric owners and extended attributes (file capabilities) as they are in the rootfs
        packed = subprocess.run(["tar", "--numeric-owner", "--xattrs", "-C", str(rootfs), "-cf", str(archive), "."],
                                capture_output=True, text=True)
        if packed.returncode != 0:
            raise ImageBuildError(f"packing the root filesystem failed: {packed.stderr.strip()[-500:]}",
                                  f"check the free space under {tempfile.gettempdir()} (df -h), then quorum images build")
        try:
            engine.client.image.import_(archive, tag=recipe.tag, changes=["CMD [\"/sbin/init\"]"])
        except DockerException as error:
            raise ImageBuildError(f"docker import of {recipe.tag} failed: {error}",
                                  "check the engine's storage (docker info, df -h /var/lib/docker), then "
                                  "quorum images build") from error
    return recipe.tag, time.monotonic() - started


def _finish_rootfs(rootfs: Path, etcd_binaries: list[Path]) -> None:
    for binary in etcd_binaries:
        shutil.copy2(binary, rootfs / "usr/local/bin" / binary.name)
    # daemons a node image must not start by itself: the backends start what they want
    for unit in ("haproxy.service", "containerd.service"):
        link = rootfs / "etc/systemd/system/multi-user.target.wants" / unit
        link.unlink(missing_ok=True)
    shutil.rmtree(rootfs / "var/cache/apt/archives", ignore_errors=True)
    (rootfs / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
    for lists in (rootfs / "var/lib/apt/lists").glob("*_Packages"):
        lists.unlink()
