"""kind's node image, built here from local parts: what `kind build node-image` makes, without a registry.

kind's base image is built from git and its control-plane images come from registry.k8s.io; neither is
reachable. This recipe (docs/backends.md, feasibility run) takes instead:
- a Debian rootfs with kind's package list plus Debian's containerd, runc and CNI plugins (base_image),
- kind's own base files (entrypoint, systemd units, containerd config) from its module source,
- kubelet, kubeadm and kubectl from the toolchain, and /kind/version,
- the images kubeadm lists (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd, coredns,
  pause) as `docker import`s of the toolchain's static binaries (kube-proxy's with Debian's nft beside it),
  preloaded into the node's containerd,
and three changes that this host needs, each found in the feasibility run:
1. kubeadm waits for containerd: kind runs `kubeadm init` as soon as the node boots, and Debian's containerd
   1.6 was not yet listening at kubeadm's preflight (a wrapper waits up to a minute for `ctr version`,
   except for `kubeadm <init|join> phase ...`, which kind's entrypoint runs before containerd starts);
2. pause 3.10.1 is in the image besides kind's 3.10: kubeadm 1.34 pre-pulls its own pause tag;
3. `restrict_oom_score_adj = true` in containerd's CRI config: this host's capability bounding set lacks
   CAP_SYS_RESOURCE (GOTCHAS), so the nested runc may not lower a pod's oom_score_adj, and every sandbox of
   a static pod failed until containerd stopped asking (what kind does for rootless nodes).

The tag is a hash of the base recipe, the Kubernetes version, the binaries' digests and this file, so a
changed input builds a new image; the final tag is written last, so a failed build leaves none behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

from python_on_whales.exceptions import DockerException

from harness.backends.docker import base_image
from harness.backends.docker.base_image import ImageBuildError
from harness.backends.docker.engine import Engine
from harness.toolchain.cache import BinaryCache
from harness.toolchain.gobuild import go_env
from harness.toolchain.gotool import find_go
from harness.toolchain.install import Toolchain
from harness.toolchain.versions import COREDNS_VERSION, ETCD_VERSION, KIND_VERSION, KUBERNETES_DEFAULT

REPOSITORY = "quorum/kind-node"
LABEL = "org.quorum.recipe"
# kind's base image package list (images/base/Dockerfile) with Debian's containerd, runc and CNI plugins
PACKAGES = (
    "systemd", "systemd-sysv", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux", "mount",
    "kmod", "libseccomp2", "pigz", "e2fsprogs", "bash", "ca-certificates", "curl", "jq", "procps", "containerd",
    "runc", "containernetworking-plugins", "socat",
)
BASE_RECIPE = base_image.Recipe(packages=PACKAGES)
CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
ETCD_IMAGE = f"registry.k8s.io/etcd:{ETCD_VERSION.lstrip('v')}-0"  # kind's config pins kubeadm to it (imageTag)
COREDNS_IMAGE = f"registry.k8s.io/coredns/coredns:{COREDNS_VERSION}"  # kubeadm's coredns addon (entrypoint /coredns)
# kube-proxy runs in nftables mode (harness/backends/kind/cluster.py): it programs Services with Debian's nft, so its image
# holds the static kube-proxy and nft with exactly the libraries ldd names, copied out of the node's base image
# (the iptables mode would also need every xtables extension, which nothing lists)
KUBE_PROXY_RECIPE = """FROM {base} AS tools
RUN mkdir -p /out/etc && cp /etc/ld.so.cache /out/etc/ \\
 && for f in /usr/sbin/nft $(ldd /usr/sbin/nft | grep -o '/[^ ]*'); do cp --parents -L "$f" /out; done
FROM scratch
COPY --from=tools /out/ /
COPY kube-proxy /usr/local/bin/kube-proxy
ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""
PAUSE_IMAGES = ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10.1")  # containerd's, kubeadm 1.34's
# pause answers -v as upstream's pause.c does (prints its version, exits 0): kubeadm's upgrade health check runs a
# Job of the pause image with -v and waits for it to complete
PAUSE_SOURCE = """package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// a pod sandbox's only process: wait for the end; -v: say what it is and exit
func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause.c quorum")
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
"""
# The CNI: kind's kindnetd is not on the Go proxy. Quorum's stand-in does its core job: a DaemonSet on every node
# writes a ptp + host-local CNI config for the node's podCIDR and routes the other nodes' podCIDRs via their
# InternalIPs. Its image holds one static binary that changes root to the node's filesystem (mounted at /host)
# and runs the script below with the node's own kubectl, jq and ip, as the kubelet's user (kubelet.conf).
CNI_IMAGE = "quorum/kind-cni:1"
HOST_EXEC_SOURCE = """package main

import (
	"fmt"
	"os"
	"syscall"
)

// run a program of the node's own filesystem, mounted at /host
func main() {
	if err := syscall.Chroot("/host"); err != nil {
		fmt.Fprintln(os.Stderr, "chroot /host:", err)
		os.Exit(1)
	}
	if err := os.Chdir("/"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, "exec", os.Args[1], err)
		os.Exit(1)
	}
}
"""
CNI_SCRIPT = Path(__file__).with_name("quorum-cni.sh")
CNI_MANIFEST = Path(__file__).with_name("default-cni.yaml")
KUBEADM_WAITS_FOR_CONTAINERD = """#!/bin/sh
# Quorum: kind runs kubeadm init/join as soon as the node boots; wait (up to 60 s) until containerd answers.
# Not for phases: kind's entrypoint runs `kubeadm init phase certs` on a rebooted node whose address changed,
# before systemd (and so containerd) starts; waiting there would only delay the boot.
case "$1 $2" in
  "init phase"|"join phase") ;;
  "init "*|"join "*|init|join)
    i=0
    while [ "$i" -lt 300 ] && ! ctr version >/dev/null 2>&1; do i=$((i + 1)); sleep 0.2; done ;;
esac
exec /usr/bin/kubeadm.real "$@"
"""
CONTAINERD_READY_S = 60


def kind_source(kind_version: str = KIND_VERSION) -> Path:
    """kind's module source (its base image files live in images/base/files), from the Go module proxy."""
    go = find_go(BinaryCache())
    result = subprocess.run([str(go), "mod", "download", "-json", f"sigs.k8s.io/kind@{kind_version}"],
                            capture_output=True, text=True, env=go_env(go), cwd=tempfile.gettempdir())
    try:
        directory = Path(json.loads(result.stdout)["Dir"])
    except (ValueError, KeyError):
        raise ImageBuildError(f"could not fetch kind {kind_version}'s source from the Go module proxy: "
                              f"{(result.stdout + result.stderr).strip()[-500:]}",
                              "make the Go module proxy reachable (GOPROXY), then quorum images build --kind") from None
    return directory


def _inputs(kubernetes: str, toolchain: Toolchain) -> dict[str, str]:
    binaries = ("kubelet", "kubeadm", "kubectl", *CONTROL_PLANE, "kube-proxy", "etcd", "etcdctl", "coredns")
    digests = {name: hashlib.sha256(toolchain.path(name).read_bytes()).hexdigest() for name in binaries}
    return {"base": BASE_RECIPE.tag, "kubernetes": kubernetes, "kind": KIND_VERSION,
            **{path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in (Path(__file__), CNI_SCRIPT,
                                                                                      CNI_MANIFEST)},
            **digests}


def tag_for(kubernetes: str = KUBERNETES_DEFAULT, toolchain: Toolchain | None = None) -> str:
    inputs = _inputs(kubernetes, toolchain or Toolchain(kubernetes=kubernetes))
    return f"{REPOSITORY}:{kubernetes}-{hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:12]}"


def exists(engine: Engine, kubernetes: str = KUBERNETES_DEFAULT) -> bool:
    return engine.client.image.exists(tag_for(kubernetes))


def build(engine: Engine, kubernetes: str = KUBERNETES_DEFAULT, say=lambda _: None) -> tuple[str, float]:
    """The node image's tag and the seconds its build took (0.0 when it was already there)."""
    toolchain = Toolchain(kubernetes=kubernetes)
    kubernetes = str(toolchain.kubernetes)
    tag = tag_for(kubernetes, toolchain)
    if engine.client.image.exists(tag):
        return tag, 0.0
    started = time.monotonic()
    base, _ = base_image.build(engine, BASE_RECIPE, say=say)
    files = kind_source() / "images/base/files"
    with tempfile.TemporaryDirectory(prefix="quorum-kind-node-") as work:
        name = f"quorum-kind-build-{uuid.uuid4().hex[:8]}"
        docker = engine.client
        intermediate = f"{REPOSITORY}-build:{name}"
        images: list[str] = []
        try:
            _component_images(engine, toolchain, base, Path(work), images, say)
            # --init: an init that reaps containerd when it is stopped before the commit
            docker.run(base, ["infinity"], entrypoint="sleep", detach=True, name=name, init=True,
                       security_options=["seccomp=unconfined"])
            say(f"assembling the node in {name}")
            _assemble(engine, name, files, toolchain, kubernetes)
            _preload(engine, name, images, Path(work), say)
            docker.container.commit(name, intermediate)
            say(f"tagging {tag}")
            (Path(work) / "Dockerfile").write_text(
                f"FROM {intermediate}\n"
                "ENV container=docker\n"
                "STOPSIGNAL SIGRTMIN+3\n"  # what kind's base image sets: systemd's clean shutdown signal
                'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]\n'
                f'LABEL {LABEL}="{tag}"\n')
            docker.legacy_build(str(work), tags=[tag], file=str(Path(work) / "Dockerfile"))
        except DockerException as error:
            raise ImageBuildError(f"building the kind node image failed: {error}",
                                  "check the engine (docker info, df -h), then quorum images build --kind") from error
        finally:
            if docker.container.exists(name):
                docker.container.remove(name, force=True, volumes=True)
            # the component images live on inside the node image; Docker keeps none of them, nor the commit
            for image in (*images, intermediate):
                if docker.image.exists(image):
                    docker.image.remove(image, force=True)
    _remove_older(engine, tag)
    return tag, time.monotonic() - started


def _remove_older(engine: Engine, current: str) -> None:
    """Node images of older recipes (about 1 GiB each); one still used by a cluster stays."""
    for image in engine.client.image.list(REPOSITORY):
        for old in image.repo_tags:
            if old != current and old.startswith(f"{REPOSITORY}:"):
                try:
                    engine.client.image.remove(old)
                except DockerException:
                    pass


def _import(engine: Engine, tag: str, files: dict[str, Path], work: Path, entrypoint: str | None = None) -> str:
    """An image holding only `files` (static binaries), as `docker import` makes it."""
    archive = work / f"{uuid.uuid4().hex[:8]}.tar"
    with tarfile.open(archive, "w") as tar:
        for destination, source in files.items():
            info = tar.gettarinfo(str(source), arcname=destination.lstrip("/"))
            info.uid = info.gid = 0
            info.mode = 0o755
            with open(source, "rb") as handle:
                tar.addfile(info, handle)
    changes = ["ENV PATH=/usr/local/bin:/usr/bin:/bin"] + ([f"ENTRYPOINT {entrypoint}"] if entrypoint else [])
    engine.client.image.import_(archive, tag=tag, changes=changes)
    archive.unlink()
    return tag


def _go_binary(work: Path, name: str, source_code: str) -> Path:
    """A static binary from one Go file (stdlib only: nothing to download)."""
    go = find_go(BinaryCache())
    source = work / f"{name}-src"
    source.mkdir()
    (source / "go.mod").write_text(f"module quorum/{name}\n\ngo 1.21\n")
    (source / "main.go").write_text(source_code)
    binary = work / name
    result = subprocess.run([str(go), "build", "-o", str(binary), "."], cwd=source, env=go_env(go),
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise ImageBuildError(f"building {name} failed: {result.stderr.strip()[-500:]}",
                              "check the Go toolchain (quorum toolchain status)")
    return binary


def _kube_proxy_image(engine: Engine, tag: str, base: str, binary: Path, work: Path) -> str:
    """kube-proxy with nft (KUBE_PROXY_RECIPE), built from the node's base image."""
    context = work / "kube-proxy-context"
    context.mkdir()
    shutil.copy(binary, context / "kube-proxy")
    (context / "kube-proxy").chmod(0o755)
    (context / "Dockerfile").write_text(KUBE_PROXY_RECIPE.format(base=base))
    engine.client.legacy_build(str(context), tags=[tag])
    shutil.rmtree(context)
    return tag


def release_images(engine: Engine, toolchain: Toolchain, base: str, work: Path, images: list[str]) -> None:
    """Import into Docker the images of the toolchain's release that kubeadm lists: kube-apiserver,
    kube-controller-manager, kube-scheduler and kube-proxy (etcd, coredns and pause are pinned by kind's config and
    stay with a release change). Each tag is appended to `images` as soon as it exists: the caller removes them."""
    kubernetes = str(toolchain.kubernetes)
    for name in CONTROL_PLANE:
        images.append(_import(engine, f"registry.k8s.io/{name}:{kubernetes}",
                              {f"/usr/local/bin/{name}": toolchain.path(name)}, work))
    images.append(_kube_proxy_image(engine, f"registry.k8s.io/kube-proxy:{kubernetes}", base,
                                    toolchain.path("kube-proxy"), work))


def _component_images(engine: Engine, toolchain: Toolchain, base: str, work: Path, images: list[str], say) -> None:
    """Import each image kubeadm lists into Docker, appending its tag to `images` as soon as it exists (the
    caller removes them all after the build, a failed one too)."""
    release_images(engine, toolchain, base, work, images)
    images.append(_import(engine, COREDNS_IMAGE, {"/coredns": toolchain.path("coredns")}, work,
                          entrypoint='["/coredns"]'))
    images.append(_import(engine, ETCD_IMAGE, {"/usr/local/bin/etcd": toolchain.path("etcd"),
                                               "/usr/local/bin/etcdctl": toolchain.path("etcdctl")}, work))
    pause = _go_binary(work, "pause", PAUSE_SOURCE)
    for tag in PAUSE_IMAGES:
        images.append(_import(engine, tag, {"/pause": pause}, work, entrypoint='["/pause"]'))
    images.append(_import(engine, CNI_IMAGE, {"/host-exec": _go_binary(work, "host-exec", HOST_EXEC_SOURCE)}, work))
    say(f"component images: {', '.join(images)}")


def _sh(engine: Engine, container: str, script: str) -> str:
    return engine.client.container.execute(container, ["bash", "-euc", script])


def _assemble(engine: Engine, container: str, files: Path, toolchain: Toolchain, kubernetes: str) -> None:
    docker = engine.client
    docker.container.copy(f"{files}/.", (container, "/"))
    for binary in ("kubelet", "kubeadm", "kubectl"):
        docker.container.copy(str(toolchain.path(binary)), (container, f"/usr/bin/{binary}"))
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as wrapper:
        wrapper.write(KUBEADM_WAITS_FOR_CONTAINERD)
    try:
        docker.container.copy(wrapper.name, (container, "/tmp/kubeadm-wrapper"))
    finally:
        Path(wrapper.name).unlink()
    docker.container.copy(str(CNI_SCRIPT), (container, "/tmp/quorum-cni.sh"))
    docker.container.copy(str(CNI_MANIFEST), (container, "/tmp/default-cni.yaml"))
    _sh(engine, container, " && ".join((
        # the module cache's files are read-only; kind's Dockerfile makes them executable the same way
        "chmod -R u+w /etc/containerd /etc/systemd /kind /usr/local/bin",
        "chmod 755 /usr/local/bin/entrypoint /usr/local/bin/clean-install /kind/bin/* /usr/bin/kubelet /usr/bin/kubectl",
        "mv /usr/bin/kubeadm /usr/bin/kubeadm.real && chmod 755 /usr/bin/kubeadm.real",
        "mv /tmp/kubeadm-wrapper /usr/bin/kubeadm && chmod 755 /usr/bin/kubeadm",
        "ln -sf /usr/bin/containerd /usr/local/bin/containerd && ln -sf /usr/bin/ctr /usr/local/bin/ctr",
        "mkdir -p /opt/cni/bin && cp -a /usr/lib/cni/. /opt/cni/bin/",
        "sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml",
        "grep -q 'restrict_oom_score_adj = true' /etc/containerd/config.toml",
        # as kind's base Dockerfile: the runtime spec gets kind's product-files hook and no rlimits
        "ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + "
        "{\"path\": \"/kind/bin/mount-product-files.sh\"}' | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json",
        "find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete",
        "rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/*"
        " /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev*"
        " /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*",
        "echo ReadKMsg=no >> /etc/systemd/journald.conf",
        "systemctl enable kubelet.service containerd.service undo-mount-hacks.service",
        "systemctl mask systemd-binfmt.service",
        f"mkdir -p /etc/kubernetes/manifests /kind/manifests /etc/cni/net.d && echo -n {kubernetes} > /kind/version",
        "install -m 755 /tmp/quorum-cni.sh /kind/bin/quorum-cni.sh && install -m 644 /tmp/default-cni.yaml "
        "/kind/manifests/default-cni.yaml && rm /tmp/quorum-cni.sh /tmp/default-cni.yaml",
    )))


def _normalized(image: str) -> str:
    """containerd's full name for a Docker-style reference (quorum/x:1 is docker.io/quorum/x:1)."""
    first = image.split("/", 1)[0]
    if "/" in image and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"docker.io/{image}" if "/" in image else f"docker.io/library/{image}"


def _preload(engine: Engine, container: str, images: list[str], work: Path, say) -> None:
    """Import the images into the node's containerd (namespace k8s.io, pinned) the way kind's build does."""
    _sh(engine, container, "nohup containerd > /tmp/containerd.log 2>&1 &")
    _sh(engine, container, f"for i in $(seq {CONTAINERD_READY_S * 5}); do ctr version >/dev/null 2>&1 && exit 0;"
                           " sleep 0.2; done; cat /tmp/containerd.log; exit 1")
    archive = work / "images.tar"
    engine.client.image.save(images, output=archive)
    engine.client.container.copy(str(archive), (container, "/tmp/images.tar"))
    archive.unlink()
    say(f"preloading {len(images)} images into the node's containerd")
    _sh(engine, container, "ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned "
                           "--all-platforms --no-unpack --digests /tmp/images.tar && rm /tmp/images.tar")
    listed = _sh(engine, container, "ctr --namespace=k8s.io images list -q")
    missing = [image for image in images if _normalized(image) not in listed.split()]
    if missing:
        raise ImageBuildError(f"images missing from the node's containerd after the import: {missing}",
                              "quorum images build --kind (a rebuild starts from scratch)")
    _sh(engine, container, "pkill containerd; for i in $(seq 50); do pgrep containerd >/dev/null || exit 0; sleep 0.2; done;"
                           " exit 1")
    _sh(engine, container, "rm -f /tmp/containerd.log")
