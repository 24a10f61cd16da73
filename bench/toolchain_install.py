"""Cold and warm `quorum toolchain install` times.

Cold: empty Quorum cache, empty Go module and build caches (temporary directories, so the machine's
own caches are untouched). Debian packages are already installed in both cases (apt time depends on
the mirror, not on Quorum). Warm: the same install again.

    python bench/toolchain_install.py [--kubernetes v1.34.4] [--warm-only]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_results  # noqa: E402


def timed_install(env: dict[str, str], kubernetes: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "harness.cli", "toolchain", "install", "--kubernetes", kubernetes],
                   env=env, check=True)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubernetes", default="v1.34.4")
    parser.add_argument("--warm-only", action="store_true", help="measure the machine's real cache only")
    args = parser.parse_args()
    rows = []
    if not args.warm_only:
        scratch = Path(tempfile.mkdtemp(prefix="quorum-bench-"))
        env = {**os.environ, "QUORUM_CACHE": str(scratch / "cache"), "GOMODCACHE": str(scratch / "gomod"),
               "GOCACHE": str(scratch / "gobuild")}
        try:
            rows.append({"install": "cold (empty caches)", "seconds": round(timed_install(env, args.kubernetes), 1)})
            rows.append({"install": "warm (second run)", "seconds": round(timed_install(env, args.kubernetes), 1)})
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(scratch)], check=False)  # module cache is read-only
            shutil.rmtree(scratch, ignore_errors=True)
    else:
        rows.append({"install": "warm (machine cache)", "seconds": round(timed_install(dict(os.environ), args.kubernetes), 1)})
    note = ("Cold: empty Quorum, Go module and Go build caches (downloads every module, compiles 10 binaries); "
            "Debian packages were present." if not args.warm_only else
            "Warm only (`--warm-only`): every binary present, checksums verified, nothing built.")
    write_results("toolchain_install", rows, ["install", "seconds"], f"Toolchain install, Kubernetes {args.kubernetes}", note)


if __name__ == "__main__":
    main()
