"""Adapters for agent frameworks (imported lazily: each needs its framework's extra, e.g. `[camel]`)."""
