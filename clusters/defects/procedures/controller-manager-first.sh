#!/bin/sh
# A bad procedure (a twin): it upgrades the controller-managers before the apiservers. Each exits 0 and the
# cluster ends on the new release, but for a while a controller-manager is newer than the apiservers it talks to,
# which the version skew policy does not support: the change fails on skew-held. Usage: controller-manager-first.sh RELEASE
set -eu
to=${1:?usage: controller-manager-first.sh RELEASE}
for component in kube-controller-manager kube-apiserver kube-scheduler; do
    for host in ${HOSTS:-c1 c2 c3}; do
        quorum install "$component@$host" "$to"
    done
done
