"""Quorum: a chaos and conformance harness for Kubernetes control planes."""

__version__ = "0.1.0"
