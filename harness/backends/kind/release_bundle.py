"""A Kubernetes release for kubeadm nodes that reach no registry: what a team mirrors for an air-gapped upgrade.

`quorum images bundle RELEASE DIR` writes
- DIR/bin/kubeadm, DIR/bin/kubelet, DIR/bin/kubectl: the release's binaries (what the nodes' packages install);
- DIR/images.tar: the images `kubeadm upgrade` asks for at that release (kube-apiserver, kube-controller-manager,
  kube-scheduler, kube-proxy), made as the kind node image makes its own (harness/backends/kind/node_image.py), for
  `ctr --namespace=k8s.io images import`;
- DIR/bundle.json: the release, the images and each file's sha256.

etcd, coredns and pause are not in it: kind's cluster config pins their tags (harness/backends/kind/cluster.py),
so an upgrade keeps the ones the node image holds. The reference procedure clusters/procedures/kubeadm-upgrade.yaml
copies a bundle to each node. The bundle appears whole or not at all: it is written beside DIR and renamed last.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from python_on_whales.exceptions import DockerException

from harness.backends.docker import base_image
from harness.backends.docker.base_image import ImageBuildError
from harness.backends.docker.engine import Engine
from harness.backends.kind import node_image
from harness.errors import QuorumError
from harness.toolchain.cache import sha256_of
from harness.toolchain.install import Toolchain

BINARIES = ("kubeadm", "kubelet", "kubectl")
IMAGES_ARCHIVE = "images.tar"
MANIFEST = "bundle.json"


class BundleError(QuorumError):
    """A bundle that cannot be written where asked."""


@dataclass(frozen=True)
class Bundle:
    directory: Path
    release: str
    images: tuple[str, ...]


def vacant(directory: Path) -> Path:
    """`directory` when nothing is there yet (a bundle never lands in or over someone's files), else a BundleError."""
    directory = Path(directory)
    if directory.exists():
        raise BundleError(f"{directory} already exists", "name a directory that does not exist yet, or remove it")
    return directory


def write(engine: Engine, release: str, directory: Path, say=lambda _: None) -> Bundle:
    """Write the bundle of `release` to `directory` (which must not exist yet), building the release's binaries
    first when the toolchain lacks them."""
    toolchain = Toolchain(kubernetes=release)
    release = str(toolchain.kubernetes)
    directory = vacant(directory)
    names = (*BINARIES, *node_image.CONTROL_PLANE, "kube-proxy")
    toolchain.install(list(names))
    sources = {name: toolchain.path(name) for name in BINARIES}
    directory.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{directory.name}.partial-", dir=directory.parent))
    images: list[str] = []
    try:
        (partial / "bin").mkdir()
        for name in BINARIES:
            shutil.copyfile(sources[name], partial / "bin" / name)
            (partial / "bin" / name).chmod(0o755)
        base, _ = base_image.build(engine, node_image.BASE_RECIPE, say=say)  # kube-proxy's nft comes from it
        work = partial / "work"
        work.mkdir()
        node_image.release_images(engine, toolchain, base, work, images)  # as the node image makes its own
        say(f"saving {len(images)} images to {IMAGES_ARCHIVE}")
        engine.client.image.save(images, output=partial / IMAGES_ARCHIVE)
        shutil.rmtree(work)
        files = [partial / IMAGES_ARCHIVE, *(partial / "bin" / name for name in BINARIES)]
        (partial / MANIFEST).write_text(json.dumps(
            {"release": release, "images": images,
             "sha256": {str(f.relative_to(partial)): sha256_of(f) for f in files}}, indent=2) + "\n")
        partial.rename(directory)
    except DockerException as error:
        raise ImageBuildError(f"building the bundle's images failed: {error}",
                              "check the engine (docker info, df -h), then run the command again") from error
    finally:
        shutil.rmtree(partial, ignore_errors=True)
        for image in images:  # the archive holds them; Docker keeps none
            if engine.client.image.exists(image):
                engine.client.image.remove(image, force=True)
    return Bundle(directory, release, tuple(images))
