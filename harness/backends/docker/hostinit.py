"""The command of a docker-backend host: one keeper per component of this host, like a node's kubelet
starting its static pods at boot. A restarted container runs it again, so a rebooted node brings its
components back: the ones its control directories name now (a host a scale joined runs its components again, a
retired one none). The container runs until it is stopped, with or without components (a spare, a retired
controller), so a scale can start keepers in it at any time. SIGTERM (docker stop) stops the keepers, which stop
their components.

    python3 -m harness.backends.docker.hostinit <run-dir> <host>

Standard library only: it runs with the container's python3, not the harness's virtualenv.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def components_of(run_dir: Path, host: str) -> list[str]:
    """The component ids ('<component>@<host>') whose control directories the run holds for this host."""
    controls = run_dir / "components"
    return sorted(p.name for p in controls.iterdir() if p.name.endswith(f"@{host}")) if controls.is_dir() else []


def main(run_dir: str, host: str) -> int:
    root = Path(run_dir)
    keepers = [subprocess.Popen([sys.executable, "-m", "harness.backends.process.supervisor", str(root / "components" / c)],
                                stdin=subprocess.DEVNULL) for c in components_of(root, host)]
    stopping = []

    def stop(_signum: int, _frame: object) -> None:
        stopping.append(True)
        for keeper in keepers:
            if keeper.poll() is None:
                keeper.terminate()
        for component in components_of(root, host):  # the keepers a scale started here later (docker exec)
            try:
                os.kill(int((root / "components" / component / "keeper.pid").read_text()), signal.SIGTERM)
            except (OSError, ValueError):
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # a host runs until it is stopped, like a node: a scale may retire every component here and join it again
    while not stopping or any(keeper.poll() is None for keeper in keepers):
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
