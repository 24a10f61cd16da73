"""Changes a platform team promotes: release upgrades and their rollback, checked against the version skew policy."""
