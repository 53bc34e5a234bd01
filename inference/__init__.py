"""Client side of Gecko: agents, the Gecko HTTP client, real-tool bridges and the judge client."""
