"""The runner's check of Gecko before a run: reachable, healthy for this run (the benchmark's check of the roles),
serving the toolkits the selected tasks need, and accepting our API key. Each failure is one `PreflightError`
line that says how to fix it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from benchmarks.runner.errors import PreflightError
from inference.gecko import GeckoClient, GeckoError, GeckoNotFoundError, GeckoRequestError, HealthInfo

KEY_HINT = "pass --gecko-api-key-file FILE (or set GECKO_API_KEY) with the key Gecko was started with"


def _no_check(health: HealthInfo) -> None:
    return None


async def check_gecko(client: GeckoClient, toolkits: Sequence[str], start: str,
                      check: Callable[[HealthInfo], None] = _no_check) -> HealthInfo:
    """Gecko answers, passes `check`, serves `toolkits` and takes our key; returns its health report.

    Args:
        client: Client of the Gecko to use (with the run's API key, if any).
        toolkits: Toolkits the selected tasks need (fetching them also proves the key: `/health` is open).
        start: The command that starts a suitable Gecko (for the messages).
        check: The run's checks of the health report (raise `PreflightError`).

    Raises:
        PreflightError: A check failed.
    """
    try:
        health = await client.health()
    except GeckoError as exc:
        raise PreflightError(f"Gecko is not reachable at {client.base_url}: {exc}. Start it with: {start} "
                             "(or pass --gecko-url auto to start one for the run)") from exc
    if health.status != "ok":
        raise PreflightError(f"Gecko at {client.base_url} reports status {health.status!r}; restart it with: {start}")
    check(health)
    for name in sorted(set(toolkits)):
        try:
            await client.toolkit(name)
        except GeckoNotFoundError as exc:
            raise PreflightError(f"Gecko at {client.base_url} does not serve the toolkit {name!r} the selected tasks "
                                 f"need; restart it with: {start}") from exc
        except GeckoRequestError as exc:
            if exc.status in (401, 403):
                given = "refused our API key" if client.has_api_key else "requires an API key"
                raise PreflightError(f"Gecko at {client.base_url} {given}: {KEY_HINT}") from exc
            raise PreflightError(f"Gecko at {client.base_url} refused a toolkit request: {exc}") from exc
        except GeckoError as exc:
            raise PreflightError(f"Gecko at {client.base_url} failed: {exc}; check its log, or restart it with: "
                                 f"{start}") from exc
    return health
