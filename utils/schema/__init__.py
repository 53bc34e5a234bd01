"""JSON Schema helpers shared by the server and the client side.

- `formats`: the string formats Gecko checks and generates (one definition for both);
- `fastcheck`: yes/no validity through jsonschema-rs, with the Python validator as fallback;
- `instance`: the deterministic instance generator (Gecko's rules synthesizer, the LLM stub);
- `refs`: local JSON-pointer `$ref` resolution (the toolkit loader, the generator).
"""
