"""The target protocol: what every cluster handle offers the faults, monitors, checks and scenarios."""
