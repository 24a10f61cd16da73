"""A team's own change, run and judged by Quorum (docs/lifecycle.md, "Your own procedure")."""
