"""Images kind needs that no registry can give us here, built locally from Quorum's node base image."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from python_on_whales.exceptions import DockerException

from harness.backends.docker import base_image
from harness.backends.docker.base_image import ImageBuildError
from harness.backends.docker.engine import Engine
from harness.toolchain.install import Toolchain

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


def _build(engine: Engine, tag: str, what: str, dockerfile: str, files: dict[str, Path] | None = None) -> None:
    """docker build of `dockerfile` with `files` (name in the context: source) beside it."""
    with tempfile.TemporaryDirectory(prefix="quorum-image-") as context:
        for name, source in (files or {}).items():
            shutil.copy(source, Path(context) / name)
            (Path(context) / name).chmod(0o755)
        (Path(context) / "Dockerfile").write_text(dockerfile)
        try:
            engine.client.legacy_build(context, tags=[tag])
        except DockerException as error:
            raise ImageBuildError(f"building {what} failed: {error}",
                                  "check the engine (docker info), then quorum images build --kind") from error


def build_lb_standin(engine: Engine, say=lambda _: None) -> str:
    """The HAProxy stand-in for kind's Envoy load balancer (harness/backends/kind/lb_standin.py), tagged as kind
    expects; rebuilt only when the base image or the script changed."""
    base_tag, _ = base_image.build(engine, say=say)
    if lb_standin_current(engine, base_tag):
        return LB_IMAGE
    say(f"building {LB_IMAGE} (HAProxy stand-in) from {base_tag}")
    _build(engine, LB_IMAGE, "the load balancer stand-in",
           f"FROM {base_tag}\n"
           "COPY envoy /usr/local/bin/envoy\n"
           "RUN mkdir -p /home/envoy\n"
           f'LABEL {STANDIN_LABEL}="haproxy-{_lb_digest(base_tag)}"\n',
           {"envoy": STANDIN_SCRIPT})
    return LB_IMAGE


# iperf3 for pods (the bandwidth suite on kind): Debian's binary and exactly the libraries ldd names, copied out
# of the node base image into an image of their own (a few MiB, loaded into every worker's containerd).
# /tmp is there because iperf3 keeps each stream's buffer in a temporary file.
IPERF3_REPOSITORY = "quorum.local/iperf3"
IPERF3_RECIPE = """FROM {base} AS tools
RUN mkdir -p /out/tmp /out/etc && chmod 1777 /out/tmp && cp /etc/ld.so.cache /out/etc/ \\
 && for f in /usr/bin/iperf3 $(ldd /usr/bin/iperf3 | grep -o '/[^ ]*'); do cp --parents -L "$f" /out; done
FROM scratch
COPY --from=tools /out/ /
ENTRYPOINT ["/usr/bin/iperf3"]
"""


def iperf3_tag(base_tag: str) -> str:
    """The iperf3 image's tag: a hash of the base image's tag and the recipe, so either change rebuilds it."""
    return f"{IPERF3_REPOSITORY}:{hashlib.sha256((base_tag + IPERF3_RECIPE).encode()).hexdigest()[:12]}"


def iperf3_current(engine: Engine, base_tag: str) -> bool:
    return engine.client.image.exists(iperf3_tag(base_tag))


def build_iperf3(engine: Engine, say=lambda _: None) -> str:
    """The iperf3 pod image; built only when missing (its tag is its recipe's hash)."""
    base_tag, _ = base_image.build(engine, say=say)
    tag = iperf3_tag(base_tag)
    if not engine.client.image.exists(tag):
        say(f"building {tag} (iperf3 for pods) from {base_tag}")
        _build(engine, tag, "the iperf3 pod image", IPERF3_RECIPE.format(base=base_tag))
    return tag


# The pod checkpointer (harness/checkpointer/, standard library only): Debian's python3 with the libraries ldd names
# for it and its extension modules, its standard library without the parts a daemon never imports, the
# checkpointer's sources, and the toolchain's crictl (kind's node image has none; a static Go binary).
CHECKPOINTER_REPOSITORY = "quorum.local/checkpointer"
CHECKPOINTER_SOURCES = Path(__file__).parents[2] / "checkpointer"
CHECKPOINTER_RECIPE = """FROM {base} AS tools
RUN set -e; mkdir -p /out/etc /out/tmp && chmod 1777 /out/tmp && cp /etc/ld.so.cache /out/etc/ \\
 && py=$(readlink -f /usr/bin/python3) && lib=$(python3 -c 'import sysconfig; print(sysconfig.get_path("stdlib"))') \\
 && for f in $py $(ldd $py $lib/lib-dynload/*.so | grep -v ':$' | grep -o '/[^ ]*' | sort -u); do cp --parents -L "$f" /out; done \\
 && cp -a --parents $lib /out && ln -s "$py" /out/usr/bin/python3 \\
 && cd /out$lib && rm -rf test idlelib tkinter turtledemo ensurepip lib2to3 pydoc_data config-* site-packages dist-packages
FROM scratch
COPY --from=tools /out/ /
{copies}
COPY crictl /usr/local/bin/crictl
ENV PYTHONPATH=/opt/quorum PYTHONDONTWRITEBYTECODE=1
ENTRYPOINT ["/usr/bin/python3", "-m", "harness.checkpointer"]
"""


def _checkpointer_files() -> dict[str, Path]:
    """The build context's files: the package, harness/__init__.py (a docstring and the version) and crictl."""
    files = {f"checkpointer-{source.name}": source for source in sorted(CHECKPOINTER_SOURCES.glob("*.py"))}
    return files | {"harness-init.py": CHECKPOINTER_SOURCES.parent / "__init__.py", "crictl": Toolchain().path("crictl")}


def checkpointer_tag(base_tag: str) -> str:
    """A hash of the base image's tag, the recipe and the sources: any change rebuilds it."""
    digest = hashlib.sha256((base_tag + CHECKPOINTER_RECIPE).encode())
    for name, source in _checkpointer_files().items():
        digest.update(name.encode() + source.read_bytes())
    return f"{CHECKPOINTER_REPOSITORY}:{digest.hexdigest()[:12]}"


def build_checkpointer(engine: Engine, say=lambda _: None) -> str:
    """The checkpointer's pod image; built only when missing."""
    base_tag, _ = base_image.build(engine, say=say)
    tag = checkpointer_tag(base_tag)
    if not engine.client.image.exists(tag):
        say(f"building {tag} (the pod checkpointer) from {base_tag}")
        files = _checkpointer_files()
        copies = "\n".join(
            f"COPY {name} /opt/quorum/harness/" + ("__init__.py" if name == "harness-init.py"
                                                  else f"checkpointer/{name.removeprefix('checkpointer-')}")
            for name in files if name != "crictl")
        _build(engine, tag, "the checkpointer's image", CHECKPOINTER_RECIPE.format(base=base_tag, copies=copies), files)
    return tag
