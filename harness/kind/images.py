"""Images kind needs that no registry can give us here, built locally from Quorum's node base image."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from python_on_whales.exceptions import DockerException

from harness.docker import base_image
from harness.docker.base_image import ImageBuildError
from harness.docker.engine import Engine

# The load balancer image kind v0.33 starts for clusters with several control planes
# (sigs.k8s.io/kind pkg/cluster/internal/loadbalancer/const.go). It is kind's name for it, so kind finds it
# locally instead of pulling; the label says what it really is.
LB_IMAGE = "docker.io/envoyproxy/envoy:v1.36.2"
STANDIN_LABEL = "org.quorum.standin"
STANDIN_SCRIPT = Path(__file__).with_name("lb_standin.py")


def _lb_digest(base_tag: str) -> str:
    return hashlib.sha256(base_tag.encode() + STANDIN_SCRIPT.read_bytes()).hexdigest()[:12]


def lb_standin_current(engine: Engine, base_tag: str) -> bool:
    if not engine.client.image.exists(LB_IMAGE):
        return False
    labels = engine.client.image.inspect(LB_IMAGE).config.labels or {}
    return labels.get(STANDIN_LABEL) == f"haproxy-{_lb_digest(base_tag)}"


def build_lb_standin(engine: Engine, say=lambda _: None) -> str:
    """The HAProxy stand-in for kind's Envoy load balancer (harness/kind/lb_standin.py), tagged as kind
    expects; rebuilt only when the base image or the script changed."""
    base_tag, _ = base_image.build(engine, say=say)
    if lb_standin_current(engine, base_tag):
        return LB_IMAGE
    say(f"building {LB_IMAGE} (HAProxy stand-in) from {base_tag}")
    with tempfile.TemporaryDirectory(prefix="quorum-lb-standin-") as context:
        shutil.copy(STANDIN_SCRIPT, Path(context) / "envoy")
        (Path(context) / "envoy").chmod(0o755)
        (Path(context) / "Dockerfile").write_text(
            f"FROM {base_tag}\n"
            "COPY envoy /usr/local/bin/envoy\n"
            "RUN mkdir -p /home/envoy\n"
            f'LABEL {STANDIN_LABEL}="haproxy-{_lb_digest(base_tag)}"\n'
        )
        try:
            engine.client.legacy_build(context, tags=[LB_IMAGE])
        except DockerException as error:
            raise ImageBuildError(f"building the load balancer stand-in failed: {error}",
                                  "check the engine (docker info), then quorum images build") from error
    return LB_IMAGE
