#!/bin/sh
# The built-in example procedure for clusters Quorum builds (process and docker backends), written as a team would
# write it: every apiserver, then every controller-manager, then every scheduler, one host at a time, each answering
# on the new release before the next is touched (the version skew policy's supported upgrade order). Usage:
#   quorum change --topology clusters/ha3.yaml --expect kubernetes=v1.35.4 -- clusters/procedures/rolling-upgrade.sh v1.35.4
# HOSTS names the control-plane hosts (default: ha3's).
set -eu
to=${1:?usage: rolling-upgrade.sh RELEASE}
for component in kube-apiserver kube-controller-manager kube-scheduler; do
    for host in ${HOSTS:-c1 c2 c3}; do
        quorum install "$component@$host" "$to"
    done
done
