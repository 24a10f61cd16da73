"""Image build (cold and warm) and ha3 up/down on each backend, side by side in one run.

    python bench/backends.py [--repeat 3] [--cold] [--kind-repeat 1]

--cold removes the node base images first so their builds are measured from nothing (debootstrap from
Debian's archive, then `docker import`); without it the cold figures of the previous run are kept.
Backends: process (network namespaces), docker (privileged containers from the base image) and kind
(kind's own `kind create cluster`, 3 control planes + 2 workers, from the locally built node image; up is
until every node is Ready).
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

from harness.backends import registry  # noqa: E402
from harness.backends.docker import base_image  # noqa: E402
from harness.backends.docker.engine import ensure_engine  # noqa: E402
from harness.backends.kind import cluster as kind_cluster  # noqa: E402
from harness.backends.kind import node_image  # noqa: E402
from harness.run.state import RunState, register  # noqa: E402


def _kept(what: str) -> float | None:
    """A cold figure of the previous run (cold builds are measured only with --cold)."""
    previous = RESULTS / "backends.json"
    if not previous.exists():
        return None
    kept = next((r["up"] for r in json.loads(previous.read_text())["rows"] if r["what"] == what), "")
    return float(kept) if kept.replace(".", "", 1).isdigit() else None


def image_build(cold: bool) -> dict[str, str]:
    engine = ensure_engine()
    recipe = base_image.Recipe()
    cold_s = None
    if cold:
        if base_image.exists(engine, recipe):
            engine.client.image.remove(recipe.tag, force=True)
        _, cold_s = base_image.build(engine, recipe)
    else:
        cold_s = _kept("base image build, cold")
    started = time.monotonic()
    base_image.build(engine, recipe)
    warm_s = time.monotonic() - started
    size = engine.client.image.inspect(recipe.tag).size / 2**20
    return {"cold": f"{cold_s:.1f}" if cold_s is not None else "not measured", "warm": f"{warm_s:.2f}",
            "size": f"{size:.0f} MiB"}


def kind_image_build(cold: bool) -> dict[str, str]:
    """The kind node image from nothing but the toolchain (cold: its base rootfs too) and from a warm base."""
    engine = ensure_engine()
    tag = node_image.tag_for()
    cold_s = _kept("kind node image build, cold (base rootfs too)")
    if cold:
        for image in (tag, node_image.BASE_RECIPE.tag):
            if engine.client.image.exists(image):
                engine.client.image.remove(image, force=True)
        _, cold_s = node_image.build(engine)
    if engine.client.image.exists(tag):
        engine.client.image.remove(tag, force=True)
    _, warm_base_s = node_image.build(engine)
    started = time.monotonic()
    node_image.build(engine)
    cached_s = time.monotonic() - started
    size = engine.client.image.inspect(tag).size / 2**20
    return {"cold": f"{cold_s:.1f}" if cold_s is not None else "not measured", "warm_base": f"{warm_base_s:.1f}",
            "cached": f"{cached_s:.2f}", "size": f"{size:.0f} MiB"}


def kind_up_down() -> tuple[float, float]:
    import ipaddress
    import secrets

    with tempfile.TemporaryDirectory() as scratch:
        run_dir = Path(scratch) / "run"
        run_dir.mkdir()
        state = RunState(run_id=secrets.token_hex(3), name="bench-kind", backend="kind", run_dir=str(run_dir))
        state.save()
        register(state)
        started = time.monotonic()
        try:
            kubeconfig = kind_cluster.create(ensure_engine(), state, ipaddress.ip_network("10.213.50.0/24"))
            _wait_nodes_ready(kubeconfig, kind_cluster.KindShape().control_planes + kind_cluster.KindShape().workers)
            ready = time.monotonic()
        finally:
            down_started = time.monotonic()
            registry.down(run_dir)
        return ready - started, time.monotonic() - down_started


def _wait_nodes_ready(kubeconfig: Path, count: int, timeout_s: float = 300.0) -> None:
    import subprocess

    from harness.toolchain.install import Toolchain

    kubectl = [str(Toolchain().path("kubectl")), f"--kubeconfig={kubeconfig}"]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = subprocess.run([*kubectl, "get", "nodes", "-o", "json"], capture_output=True, text=True)
        if result.returncode == 0:
            nodes = json.loads(result.stdout)["items"]
            ready = [n for n in nodes if any(c["type"] == "Ready" and c["status"] == "True"
                                             for c in n["status"].get("conditions", []))]
            if len(ready) == count:
                return
        time.sleep(1)
    raise TimeoutError(f"not every kind node was Ready within {timeout_s:.0f}s")


def up_down(backend: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as scratch:
        run_dir = Path(scratch) / "run"
        started = time.monotonic()
        registry.get(backend).up(ROOT / "clusters" / "ha3.yaml", run_dir)
        ready = time.monotonic()
        registry.down(run_dir)
        return ready - started, time.monotonic() - ready


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="rebuild the base images from nothing")
    parser.add_argument("--kind-repeat", type=int, default=1, help="kind clusters to create (about 2 minutes each)")
    args = parser.parse_args()
    image = image_build(args.cold)
    kind_image = kind_image_build(args.cold)
    rows = [
        {"what": "base image build, cold", "up": image["cold"], "down": "", "note": image["size"]},
        {"what": "base image build, warm (cached by recipe)", "up": image["warm"], "down": "", "note": ""},
        {"what": "kind node image build, cold (base rootfs too)", "up": kind_image["cold"], "down": "",
         "note": kind_image["size"]},
        {"what": "kind node image build, base rootfs present", "up": kind_image["warm_base"], "down": "", "note": ""},
        {"what": "kind node image build, cached", "up": kind_image["cached"], "down": "", "note": ""},
    ]
    for backend in ("process", "docker"):
        runs = [up_down(backend) for _ in range(args.repeat)]
        rows.append({"what": f"ha3 on {backend}", "up": spread([u for u, _ in runs]),
                     "down": spread([d for _, d in runs]), "note": f"{len(runs)} runs"})
    runs = [kind_up_down() for _ in range(args.kind_repeat)]
    rows.append({"what": "kind, 3 control planes + 2 workers", "up": spread([u for u, _ in runs]),
                 "down": spread([d for _, d in runs]), "note": f"{len(runs)} runs, up = every node Ready"})
    write_results("backends", rows, ["what", "up", "down", "note"],
                  "Backends: image build and ha3 up/down (seconds, median (min-max))",
                  "up = to ready (/readyz via the LB, every component healthy, both leases held); the docker "
                  "backend's up includes creating its network and four containers and attaching their network "
                  "namespaces. The cold image build is debootstrap of Debian bookworm minbase with 15 packages "
                  "from Debian's archive plus `docker import`. The kind node image adds kind's base files, the "
                  "toolchain's binaries and the preloaded control-plane images to its own rootfs (22 packages); "
                  "kind's up runs `kind create cluster` (kubeadm init on the first control plane, then joins) "
                  "until every node is Ready, which needs Quorum's CNI DaemonSet on each. Figures of different days "
                  "differ with the machine's speed: on 2026-11-23 ha3 on process took 17 s here and 16 s in "
                  "bench/cluster_up_down.py, whose table (2026-11-22) says 9.4 s; PKI and network set-up, pure "
                  "CPU, were twice as slow too.")


if __name__ == "__main__":
    main()
