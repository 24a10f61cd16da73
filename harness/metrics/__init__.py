"""Figures read from the components' own /metrics endpoints (Prometheus text format)."""
