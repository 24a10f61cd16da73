#!/bin/bash
# Quorum's stand-in for kindnetd on a kind node (run by the quorum-cni DaemonSet, chrooted into the node):
# a ptp + host-local CNI config for this node's podCIDR, and a route to every other node's podCIDR via that
# node's InternalIP; again at every change of a node (a watch) and every RESYNC_S, at most once every 5 s (polling
# with kubectl every 5 s took a quarter of a core on a 5-node cluster: docs/backends.md). Pod traffic to anywhere
# else meets Quorum's FORWARD drop on the host (no masquerading).
# The API is reached through kind's load balancer (CONTROL_PLANE_ENDPOINT, set by kind) with the DaemonSet's
# service account token: there is no kube-proxy, so the kubernetes Service's ClusterIP leads nowhere.
set -u
conf=/etc/cni/net.d/10-quorum.conflist
: "${NODE_NAME:?the DaemonSet sets NODE_NAME}"
kubeconfig=/run/quorum-cni.kubeconfig  # the token stays in its file (tokenFile), off every command line
(umask 077 && cat > "$kubeconfig" <<CONFIG
apiVersion: v1
kind: Config
clusters: [{name: kind, cluster: {server: "https://${CONTROL_PLANE_ENDPOINT:?kind sets CONTROL_PLANE_ENDPOINT}",
                                  certificate-authority: /etc/kubernetes/pki/ca.crt}}]
users: [{name: quorum-cni, user: {tokenFile: /run/quorum-cni/token}}]
contexts: [{name: quorum-cni, context: {cluster: kind, user: quorum-cni}}]
current-context: quorum-cni
CONFIG
)
RESYNC_S=60
kc=(kubectl --kubeconfig="$kubeconfig")

configure() {  # $1: every node, as `kubectl get nodes -o json` prints them
  local nodes=$1 cidr wanted
  cidr=$(jq -r --arg me "$NODE_NAME" '.items[] | select(.metadata.name == $me) | .spec.podCIDR // empty' <<<"$nodes")
  if [ -n "$cidr" ]; then
    wanted=$(jq -n --arg cidr "$cidr" '{cniVersion: "0.4.0", name: "quorum", plugins: [
      {type: "ptp", ipMasq: false, mtu: 1500,
       ipam: {type: "host-local", ranges: [[{subnet: $cidr}]], routes: [{dst: "0.0.0.0/0"}]}},
      {type: "portmap", capabilities: {portMappings: true}}]}')
    if [ "$wanted" != "$(cat "$conf" 2>/dev/null)" ]; then
      mkdir -p "$(dirname "$conf")"
      printf '%s\n' "$wanted" > "$conf.tmp" && mv "$conf.tmp" "$conf"
      echo "$(date -Is) CNI config for $cidr"
    fi
  fi
  jq -r --arg me "$NODE_NAME" '.items[] | select(.metadata.name != $me and .spec.podCIDR != null)
    | "\(.spec.podCIDR) \([.status.addresses[]? | select(.type == "InternalIP") | .address][0] // empty)"' <<<"$nodes" |
    while read -r other via; do
      [ -n "$via" ] && ip route replace "$other" via "$via"
    done
}

wait_for_a_change() {  # until a node is added, changed or deleted, RESYNC_S pass, or the watch breaks
  local changes watcher
  exec {changes}< <(exec timeout "$RESYNC_S" "${kc[@]}" get nodes --watch-only -o name 2>/dev/null)
  watcher=$!
  read -r -u "$changes" _ || true
  kill "$watcher" 2>/dev/null
  exec {changes}<&-
}

while true; do
  listed=$SECONDS
  if nodes=$("${kc[@]}" get nodes -o json); then
    configure "$nodes"
    wait_for_a_change
  fi
  sleep $(( listed + 5 > SECONDS ? listed + 5 - SECONDS : 0 ))
done
