"""A usable Docker engine: the one running, or one Quorum starts (Debian's docker.io).

Quorum starts dockerd only when none answers and starting is allowed (QUORUM_DOCKER_START, default 1).
The engine it starts uses the system default data root, logs to the cache, and, when the host's
capability bounding set lacks capabilities that privileged containers ask for, runs every container
through harness/backends/docker/runc_wrapper.py (GOTCHAS: without it `docker run --privileged` fails with
"unable to apply caps"). An engine that was already running is used as it is; if it would fail
privileged containers, Quorum says so and how to fix it instead of failing later.

All Docker calls go through python-on-whales, with Debian's client binary (a newer client elsewhere on
PATH may not speak to an older engine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

from harness.errors import QuorumError
from harness.toolchain.cache import default_root
from harness.wait import eventually

DOCKER_CLIENT = "/usr/bin/docker"
DOCKERD = "/usr/sbin/dockerd"
RUNTIME_NAME = "quorum-runc"
START_ENV = "QUORUM_DOCKER_START"
START_TIMEOUT_S = 60.0


class DockerUnavailable(QuorumError):
    """Docker cannot be used here; the message says why and what to do."""


@dataclass(frozen=True)
class Engine:
    client: DockerClient
    started_by_quorum: bool
    runtime: str  # the default runtime of the engine


def missing_capabilities() -> list[str]:
    """Capabilities privileged containers ask for that this host's bounding set lacks."""
    from harness.backends.docker.runc_wrapper import CAP_NAMES, bounding_set

    have = bounding_set()
    return [f"CAP_{name}" for name in CAP_NAMES if f"CAP_{name}" not in have]


def client() -> DockerClient:
    return DockerClient(client_call=[DOCKER_CLIENT])


def _default_runtime(docker: DockerClient) -> str | None:
    """The answering engine's default runtime, or None when no engine answers."""
    try:
        info = docker.system.info()
    except DockerException:
        return None
    if not info.server_version:  # the client prints its own half and no error when no engine answers
        return None
    return info.default_runtime or "runc"


def engine_dir() -> Path:
    return default_root() / "docker"


def _install_wrapper() -> Path:
    """The wrapper and the real runc's path, copied where dockerd can run them (outside the repository)."""
    real = shutil.which("runc")
    if real is None:
        raise DockerUnavailable("runc is not installed", "apt-get install runc (it comes with docker.io)")
    directory = engine_dir() / "runtime"
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "quorum-runc"
    shutil.copyfile(Path(__file__).with_name("runc_wrapper.py"), wrapper)
    wrapper.chmod(0o755)
    (directory / "real-runc").write_text(real + "\n")
    return wrapper


def ensure_engine(say=lambda _: None) -> Engine:
    """The engine to use, started if needed and allowed; DockerUnavailable says why there is none."""
    if not Path(DOCKER_CLIENT).exists() or not Path(DOCKERD).exists():
        raise DockerUnavailable("Docker is not installed (no /usr/bin/docker or /usr/sbin/dockerd)",
                                "quorum toolchain install   (installs Debian's docker.io)")
    docker = client()
    found = _default_runtime(docker)
    missing = missing_capabilities()
    if found is not None:
        if missing and found != RUNTIME_NAME:
            raise DockerUnavailable(
                f"the running Docker engine's default runtime is {found}, and this host lacks "
                f"{', '.join(missing)}: privileged containers (every Quorum node) would fail with "
                "'unable to apply caps'",
                "stop that engine (e.g. `pkill dockerd`) and let Quorum start its own, or configure "
                f"{_install_wrapper()} as its default runtime")
        return Engine(docker, started_by_quorum=False, runtime=found)
    if os.environ.get(START_ENV, "1") == "0":
        raise DockerUnavailable("no Docker engine answers and starting one is not allowed here",
                                f"start dockerd, or unset {START_ENV}")
    return _start(docker, missing, say)


def _start(docker: DockerClient, missing: list[str], say) -> Engine:
    directory = engine_dir()
    directory.mkdir(parents=True, exist_ok=True)
    argv = [DOCKERD, "--pidfile", str(directory / "dockerd.pid")]
    runtime = "runc"
    if missing:
        runtime = RUNTIME_NAME
        argv += ["--add-runtime", f"{RUNTIME_NAME}={_install_wrapper()}", "--default-runtime", RUNTIME_NAME]
    say(f"starting dockerd (default runtime {runtime}"
        + (f", dropping {', '.join(missing)} the host lacks" if missing else "") + ")")
    log = directory / "dockerd.log"
    with open(log, "ab") as handle:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                         start_new_session=True)
    if eventually(lambda: _default_runtime(docker) is not None, START_TIMEOUT_S, 0.5):
        return Engine(docker, started_by_quorum=True, runtime=runtime)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-8:])
    raise DockerUnavailable(f"dockerd did not answer within {START_TIMEOUT_S:.0f}s; its log ends:\n{tail}",
                            f"read {log}")
