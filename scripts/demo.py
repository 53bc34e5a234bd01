#!/usr/bin/env python3
"""`make demo`: a short offline end-to-end run of Gecko on the bundled example toolkits.

Starts the server (rules engines, no key, no network), creates a session, makes a valid call, an
invalid one (422 problem+json), a read, shows the state and history, and stops the server.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from utils.paths import EXAMPLE_TOOLKITS_DIR  # noqa: E402
from utils.procs import gecko_server  # noqa: E402


def show(title: str, response: httpx.Response) -> None:
    print(f"\n--- {title}: HTTP {response.status_code}")
    print(json.dumps(response.json(), indent=2)[:1500])


def main() -> int:
    with tempfile.TemporaryDirectory() as state_dir, gecko_server([EXAMPLE_TOOLKITS_DIR], workers=2,
                                                                   state_dir=Path(state_dir)) as url:
        with httpx.Client(base_url=url, timeout=10) as client:
            health = client.get("/health").json()
            print(f"Gecko at {url}: {health['toolkits']} toolkits, {health['tools']} tools, "
                  f"{health['workers']['live']} workers, engines {json.dumps(health['roles'])}")
            sid = client.get("/session-id").json()["session_id"]
            headers = {"X-Session-ID": sid}
            client.post("/init-session-state", json={"state": {"customer": "ada@example.com"}}, headers=headers)
            show("valid write call orders/place_order", client.post("/orders/place_order", headers=headers, json={
                "customer_email": "ada@example.com", "items": [{"sku": "ABC-1234", "quantity": 2}],
                "shipping": "express"}))
            show("invalid call (wrong email, quantity 0, unknown argument, bad enum)", client.post(
                "/orders/place_order", headers=headers, json={
                    "customer_email": "ada-at-example", "items": [{"sku": "ABC-1234", "quantity": 0}],
                    "gift": True, "shipping": "overnight"}))
            show("read call on the document's own path GET /pets/7", client.get("/pets/7", headers=headers))
            show("session state", client.get("/get-session-state", headers=headers))
            calls = client.get(f"/sessions/{sid}/history").json()["calls"]
            print(f"\n--- history: {len(calls)} entries: " + ", ".join(f"{c['tool']}→{c['status']}" for c in calls))
    print("\nserver stopped; demo done.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
