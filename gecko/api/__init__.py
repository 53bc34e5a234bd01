"""HTTP layer: routers per resource, shared dependencies, problem+json errors."""
