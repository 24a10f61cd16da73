"""Hosts of clusters Quorum did not build, reached over SSH (docs/target.md)."""
