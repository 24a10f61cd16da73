"""Docker: the engine Quorum uses and the images it builds."""
