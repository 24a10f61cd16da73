"""Install Debian packages with apt-get, with errors that say what to do."""

from __future__ import annotations

import os
import shutil
import subprocess

from harness.errors import ToolchainError

_APT_ENV = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


def installed_version(package: str) -> str | None:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f", "${db:Status-Status} ${Version}", package], capture_output=True, text=True
    )
    status, _, version = out.stdout.partition(" ")
    return version if out.returncode == 0 and status == "installed" else None


def apt_install(packages: list[str]) -> None:
    """Install missing packages; runs `apt-get update` once if the lists do not know a package."""
    missing = [package for package in packages if installed_version(package) is None]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise ToolchainError(
            f"Debian packages {' '.join(missing)} are needed and this machine has no apt-get",
            f"install {' '.join(missing)} with the system's package manager",
        )
    if os.geteuid() != 0:
        raise ToolchainError(
            f"Debian packages {' '.join(missing)} are missing and installing them needs root",
            "run as root: sudo quorum toolchain install",
        )
    command = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    result = subprocess.run(command, capture_output=True, text=True, env=_APT_ENV)
    if result.returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, text=True, env=_APT_ENV)
        result = subprocess.run(command, capture_output=True, text=True, env=_APT_ENV)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
        hint = "free disk space, then " if "No space left" in tail else ""
        raise ToolchainError(
            f"apt-get could not install {' '.join(missing)}:\n{tail}",
            f"{hint}run `apt-get update && apt-get install {' '.join(missing)}` and read its error",
        )
