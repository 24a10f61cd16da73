"""The fake backend: a cluster that exists only as a model, for Quorum's own unit tests."""
