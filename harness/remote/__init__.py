"""Clusters Quorum did not build: their hosts reached over SSH, their API through the credentials an inventory's
kubeconfig gives (docs/target.md)."""
