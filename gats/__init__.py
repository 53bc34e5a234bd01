"""gats package."""
