#!/bin/sh
# The last step of the reference kubeadm upgrade (kubeadm-upgrade.yaml): one node at a time, drained, its kubelet
# replaced by the bundle's and restarted, back in service once it and its control-plane pods are Ready (kubeadm's
# "Upgrade kubelet and kubectl"). Environment: BUNDLE, NODES and SSH as kubeadm-load.sh says.
set -eu
: "${BUNDLE:?BUNDLE names the release bundle}" "${NODES:?NODES names the control-plane nodes}"
ssh=${SSH:-ssh}
kubectl="kubectl --kubeconfig /etc/kubernetes/admin.conf"
for node in $NODES; do
    name=$($ssh "$node" "cat /etc/hostname")
    echo "== the kubelet of $name"
    $ssh "$node" "$kubectl drain $name --ignore-daemonsets --delete-emptydir-data --timeout=120s"
    $ssh "$node" "cat > /usr/bin/kubelet.new && chmod 755 /usr/bin/kubelet.new" < "$BUNDLE/bin/kubelet"
    $ssh "$node" "systemctl stop kubelet && mv /usr/bin/kubelet.new /usr/bin/kubelet && systemctl start kubelet"
    $ssh "$node" "$kubectl wait --for=condition=Ready node/$name --timeout=120s"
    # the new kubelet restarts the node's static pods: the node is back in service once they are Ready again
    $ssh "$node" "$kubectl -n kube-system wait --for=condition=Ready pod -l tier=control-plane \
        --field-selector spec.nodeName=$name --timeout=180s"
    $ssh "$node" "$kubectl uncordon $name"
done
