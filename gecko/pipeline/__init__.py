"""The pipeline of one tool call: validate → (semantic check) → synthesize → update state."""
