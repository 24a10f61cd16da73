"""The command of a docker-backend host: one keeper per component of this host, like a node's kubelet
starting its static pods at boot. A restarted container runs it again, so a rebooted node brings its
components back. SIGTERM (docker stop) stops the keepers, which stop their components.

    python3 -m harness.backends.docker.hostinit <run-dir> <component-id>...

Standard library only: it runs with the container's python3, not the harness's virtualenv.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def main(run_dir: str, components: list[str]) -> int:
    keepers = [subprocess.Popen([sys.executable, "-m", "harness.backends.process.supervisor", str(Path(run_dir) / "components" / c)],
                                stdin=subprocess.DEVNULL) for c in components]

    def stop(_signum: int, _frame: object) -> None:
        for keeper in keepers:
            if keeper.poll() is None:
                keeper.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while any(keeper.poll() is None for keeper in keepers):
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
