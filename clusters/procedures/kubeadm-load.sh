#!/bin/sh
# Step 1 of the reference kubeadm upgrade (kubeadm-upgrade.yaml), written as a team's script for nodes that reach no
# registry: the new kubeadm and the release's images copied to every control-plane node, the images imported into
# the node's containerd, where the kubelet finds them. Environment:
#   BUNDLE  the release's bundle (quorum images bundle RELEASE DIR: bin/kubeadm, bin/kubelet, images.tar)
#   NODES   each control-plane node as SSH reaches it
#   SSH     the command that logs in as root (default: ssh), e.g. "ssh -i key -o UserKnownHostsFile=known -l root"
set -eu
: "${BUNDLE:?BUNDLE names the release bundle}" "${NODES:?NODES names the control-plane nodes}"
ssh=${SSH:-ssh}
for node in $NODES; do
    echo "== kubeadm and images on $node"
    $ssh "$node" "cat > /usr/bin/kubeadm.new && chmod 755 /usr/bin/kubeadm.new && mv /usr/bin/kubeadm.new /usr/bin/kubeadm" \
        < "$BUNDLE/bin/kubeadm"
    $ssh "$node" "ctr --namespace=k8s.io images import -" < "$BUNDLE/images.tar"
done
