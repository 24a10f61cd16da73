"""Clients of what a cluster serves: the Kubernetes API, etcd (its API and etcdctl), health endpoints, HAProxy's admin socket."""
