"""The bottom layer: settings, JSON helpers, the LLM client. Imports no other project package."""
