"""Inventories: clusters Quorum did not build, described for `--target` (docs/target.md)."""
