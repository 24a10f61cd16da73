#!/bin/sh
# A bad procedure (a twin): it installs the new release on every apiserver at once and does not wait for any, then
# upgrades the rest one by one. While the new release starts on all of them the API has no apiserver to answer:
# the change fails on availability. Usage: all-apiservers-at-once.sh RELEASE
set -eu
to=${1:?usage: all-apiservers-at-once.sh RELEASE}
pids=""
for host in ${HOSTS:-c1 c2 c3}; do
    quorum install "kube-apiserver@$host" "$to" --no-wait & pids="$pids $!"
done
for pid in $pids; do wait "$pid"; done
for component in kube-controller-manager kube-scheduler; do
    for host in ${HOSTS:-c1 c2 c3}; do
        quorum install "$component@$host" "$to"
    done
done
