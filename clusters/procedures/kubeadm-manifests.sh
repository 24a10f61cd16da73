#!/bin/sh
# A kubeadm cluster's control plane moved to another release without kubeadm, as a team's own script does it: in
# each node's static-pod manifest the component's image tag is rewritten, one node and one component at a time,
# and the next waits until the kubelet runs the new pod and it is Ready. The order is the caller's: for an upgrade
# kube-apiserver first, for a downgrade last, as the version skew policy asks (controllers never newer than the
# apiservers). The release's images must be on the nodes already (kubeadm-load.sh). Environment: NODES and SSH as
# kubeadm-load.sh says.
# Usage: kubeadm-manifests.sh RELEASE COMPONENT...   e.g. v1.34.4 kube-controller-manager kube-scheduler kube-apiserver
set -eu
to=${1:?usage: kubeadm-manifests.sh RELEASE COMPONENT...}
shift
[ $# -gt 0 ] || { echo "usage: kubeadm-manifests.sh RELEASE COMPONENT..." >&2; exit 2; }
case $to in
    v[0-9]*.[0-9]*.[0-9]*) ;;
    *) echo "RELEASE $to is not a release such as v1.34.4" >&2; exit 2 ;;
esac
for component in "$@"; do
    case $component in
        kube-apiserver|kube-controller-manager|kube-scheduler) ;;
        *) echo "$component is not a control-plane component kubeadm runs as a static pod" >&2; exit 2 ;;
    esac
done
: "${NODES:?NODES names the control-plane nodes}"
ssh=${SSH:-ssh}
kubectl="kubectl --kubeconfig /etc/kubernetes/admin.conf"
ready='{.spec.containers[0].image} {.status.conditions[?(@.type=="Ready")].status}'

for component in "$@"; do
    for node in $NODES; do
        name=$($ssh "$node" "cat /etc/hostname")
        echo "== $component on $name to $to"
        # edited beside the manifests (owner and mode kept) and moved in: the kubelet never reads a half-written file
        $ssh "$node" "cp -p /etc/kubernetes/manifests/$component.yaml /etc/kubernetes/$component.yaml.next \
            && sed -i 's|^\( *image: .*/$component\):.*|\1:$to|' /etc/kubernetes/$component.yaml.next \
            && mv /etc/kubernetes/$component.yaml.next /etc/kubernetes/manifests/$component.yaml"
        tries=0
        until $ssh "$node" "$kubectl -n kube-system get pod $component-$name -o jsonpath='$ready'" 2>/dev/null \
                | grep -q ":$to True\$"; do
            tries=$((tries + 1))
            if [ "$tries" -ge 120 ]; then
                echo "$component-$name did not run $to and turn Ready within 240 s" >&2
                exit 1
            fi
            sleep 2
        done
    done
done
