"""The machine's network as Quorum uses it: namespaces, bridges, the guard route and the machine-wide network lock."""
