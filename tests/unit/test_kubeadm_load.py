"""clusters/procedures/kubeadm-load.sh, the reference upgrade's first step, run against stand-in nodes: an SSH
command that answers as each node's containerd would, so the script's choices show without a cluster."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "clusters" / "procedures" / "kubeadm-load.sh"
IMAGES = ["registry.k8s.io/kube-apiserver:v1.35.4", "registry.k8s.io/kube-proxy:v1.35.4"]

FAKE_SSH = """#!/bin/sh
node=$1; shift
case "$*" in
  *"images ls -q"*) cat "$NODES_DIR/$node.images" ;;
  *"images import"*) cat > /dev/null; echo "imported on $node" >> "$NODES_DIR/imports" ;;
  *) cat > "$NODES_DIR/$node.kubeadm" ;;
esac
"""


def test_the_archive_goes_only_to_nodes_missing_an_image_of_the_release(tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "bin").mkdir(parents=True)
    (bundle / "bin" / "kubeadm").write_text("kubeadm v1.35.4\n")
    (bundle / "images.tar").write_text("archive\n")
    (bundle / "bundle.json").write_text(json.dumps({"release": "v1.35.4", "images": IMAGES}))
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    (nodes / "has-all.images").write_text("\n".join([*IMAGES, "sha256:0123"]) + "\n")
    (nodes / "has-one.images").write_text(IMAGES[0] + "\n")
    (nodes / "has-none.images").write_text("")
    ssh = tmp_path / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    result = subprocess.run(["sh", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "BUNDLE": str(bundle), "NODES": "has-all has-one has-none",
                                 "SSH": str(ssh), "NODES_DIR": str(nodes)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert (nodes / "imports").read_text().splitlines() == ["imported on has-one", "imported on has-none"]
    assert "every image of the release is on has-all already" in result.stdout
    # kubeadm itself goes to every node
    assert all((nodes / f"{node}.kubeadm").read_text() == "kubeadm v1.35.4\n"
               for node in ("has-all", "has-one", "has-none"))
