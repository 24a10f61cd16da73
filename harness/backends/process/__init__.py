"""The process backend: each host a network namespace, each component under a keeper (Quorum's supervisor)."""
