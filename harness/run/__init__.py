"""A run of a cluster on this machine: its state on disk and the registry of live runs."""
