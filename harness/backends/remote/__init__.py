"""A cluster Quorum did not build, described by an inventory and reached over its kubeconfig and SSH."""
