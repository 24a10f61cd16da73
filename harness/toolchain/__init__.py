"""Build or install every upstream binary Quorum runs, into a versioned cache outside the repo."""
