"""Image build (cold and warm) and ha3 up/down on each backend, side by side in one run.

    python bench/backends.py [--repeat 3] [--cold]

--cold removes the node base image first so its build is measured from nothing (debootstrap from
Debian's archive, then `docker import`); without it the cold figure of the previous run is kept.
Backends: process (network namespaces) and docker (privileged containers from the base image).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import RESULTS, write_results  # noqa: E402

from harness.backends import process  # noqa: E402
from harness.docker import base_image  # noqa: E402
from harness.docker.engine import ensure_engine  # noqa: E402


def image_build(cold: bool) -> dict[str, str]:
    engine = ensure_engine()
    recipe = base_image.Recipe()
    previous = RESULTS / "backends.json"
    cold_s = None
    if cold:
        if base_image.exists(engine, recipe):
            engine.client.image.remove(recipe.tag, force=True)
        _, cold_s = base_image.build(engine, recipe)
    elif previous.exists():
        rows = json.loads(previous.read_text())["rows"]
        kept = next((r["up"] for r in rows if r["what"] == "base image build, cold"), "")
        cold_s = float(kept) if kept.replace(".", "", 1).isdigit() else None
    started = time.monotonic()
    base_image.build(engine, recipe)
    warm_s = time.monotonic() - started
    size = engine.client.image.inspect(recipe.tag).size / 2**20
    return {"cold": f"{cold_s:.1f}" if cold_s is not None else "not measured", "warm": f"{warm_s:.2f}",
            "size": f"{size:.0f} MiB"}


def up_down(backend: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as scratch:
        run_dir = Path(scratch) / "run"
        started = time.monotonic()
        process.up(ROOT / "clusters" / "ha3.yaml", run_dir, backend=backend)
        ready = time.monotonic()
        process.down(run_dir)
        return ready - started, time.monotonic() - ready


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="rebuild the base image from nothing")
    args = parser.parse_args()
    image = image_build(args.cold)
    rows = [
        {"what": "base image build, cold", "up": image["cold"], "down": "", "note": image["size"]},
        {"what": "base image build, warm (cached by recipe)", "up": image["warm"], "down": "", "note": ""},
    ]
    for backend in ("process", "docker"):
        runs = [up_down(backend) for _ in range(args.repeat)]
        rows.append({"what": f"ha3 on {backend}", "up": spread([u for u, _ in runs]),
                     "down": spread([d for _, d in runs]), "note": f"{len(runs)} runs"})
    write_results("backends", rows, ["what", "up", "down", "note"],
                  "Backends: image build and ha3 up/down (seconds, median (min-max))",
                  "up = to ready (/readyz via the LB, every component healthy, both leases held); the docker "
                  "backend's up includes creating its network and four containers and attaching their network "
                  "namespaces. The cold image build is debootstrap of Debian bookworm minbase with 15 packages "
                  "from Debian's archive plus `docker import`.")


if __name__ == "__main__":
    main()
