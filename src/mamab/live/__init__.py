"""Live agents: each node its own process, talking over an authenticated transport."""
