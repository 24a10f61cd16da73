#!/bin/sh
# Step 1 of the reference kubeadm upgrade (kubeadm-upgrade.yaml), written as a team's script for nodes that reach no
# registry: the new kubeadm and the release's images copied to every control-plane node, the images imported into
# the node's containerd, where the kubelet finds them. A node that already holds every image of the release (a
# second change to the same release, a rerun after a failed step) is not sent the archive again: importing it reads
# and unpacks the whole archive on the node, which a busy node takes minutes for. Environment:
#   BUNDLE  the release's bundle (quorum images bundle RELEASE DIR: bin/kubeadm, bin/kubelet, images.tar, bundle.json)
#   NODES   each control-plane node as SSH reaches it
#   SSH     the command that logs in as root (default: ssh), e.g. "ssh -i key -o UserKnownHostsFile=known -l root"
set -eu
: "${BUNDLE:?BUNDLE names the release bundle}" "${NODES:?NODES names the control-plane nodes}"
ssh=${SSH:-ssh}
# the release's images, as the bundle lists them (one reference per line)
images=$(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["images"]))' "$BUNDLE/bundle.json")
for node in $NODES; do
    echo "== kubeadm and images on $node"
    $ssh "$node" "cat > /usr/bin/kubeadm.new && chmod 755 /usr/bin/kubeadm.new && mv /usr/bin/kubeadm.new /usr/bin/kubeadm" \
        < "$BUNDLE/bin/kubeadm"
    present=$($ssh "$node" "ctr --namespace=k8s.io images ls -q")
    missing=$(printf '%s\n' "$images" | while read -r image; do
        printf '%s\n' "$present" | grep -qxF "$image" || echo "$image"
    done)
    if [ -z "$missing" ]; then
        echo "every image of the release is on $node already"
        continue
    fi
    $ssh "$node" "ctr --namespace=k8s.io images import -" < "$BUNDLE/images.tar"
done
