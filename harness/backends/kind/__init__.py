"""Pieces of the kind backend that cannot come from a container registry here (docs/backends.md)."""
