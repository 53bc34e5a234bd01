"""`RunContext`: what the runner hands a benchmark's preflight: the run's name and options, and the shared
clients (one Gecko client, one LLM client), built on first use and closed by the runner."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from benchmarks.runner.autostart import start_gecko
from benchmarks.runner.options import AUTO_GECKO, RunOptions
from benchmarks.runner.protocol import LocalGecko
from inference.gecko import GeckoClient
from utils.llm import ClientConfig, LLMClient, create_client


class RunContext:
    """Shared resources of one run.

    Args:
        run_name: The run directory's name (also the `run` label of Gecko sessions).
        options: How the run is carried out.
        gecko: A Gecko client to use instead of building one (benches count requests with it); not closed here.
        llm: An LLM client to use instead of building one (tests script it); not closed here.
    """

    def __init__(self, run_name: str, options: RunOptions, *, gecko: GeckoClient | None = None,
                 llm: LLMClient | None = None) -> None:
        self.run_name = run_name
        self.options = options
        self._gecko = gecko
        self._llm = llm
        self._own_gecko: GeckoClient | None = None
        self._own_llm: LLMClient | None = None
        self._servers = contextlib.ExitStack()
        self._children: list[RunContext] = []
        self.gecko_url = options.gecko_url

    def adopt(self, child: RunContext) -> None:
        """Close `child` (a part's own context: its clients, its Gecko) when this context closes."""
        self._children.append(child)

    def start_local_gecko(self, local: LocalGecko | None) -> None:
        """Start the run's own Gecko when `--gecko-url auto` (blocks until it is healthy, printing its progress).

        Raises:
            ValueError: `auto` was asked for a benchmark that cannot start its own Gecko.
            PreflightError: it did not start (one line: why, and what to do).
        """
        if self.gecko_url != AUTO_GECKO or self._gecko is not None:
            return
        if local is None:
            raise ValueError("--gecko-url auto is not supported by this benchmark; give Gecko's URL")
        state = Path(self._servers.enter_context(tempfile.TemporaryDirectory(prefix="gecko-run-")))
        self.gecko_url = start_gecko(self._servers, list(local.schemas_dirs), workers=local.workers, state_dir=state,
                                     server_args=list(local.server_args))

    def gecko(self, *, timeout_s: float | None = None) -> GeckoClient:
        """The run's Gecko client (built on first call with `timeout_s`, if given)."""
        if self._gecko is not None:
            return self._gecko
        if self._own_gecko is None:
            connections, key = max(8, self.options.workers * 2), self.options.gecko_api_key
            self._own_gecko = (GeckoClient(self.gecko_url, max_connections=connections, api_key=key)
                               if timeout_s is None else
                               GeckoClient(self.gecko_url, timeout_s=timeout_s, max_connections=connections, api_key=key))
        return self._own_gecko

    def llm(self) -> LLMClient:
        """The run's LLM client (reply cache at `options.llm_cache`, if any)."""
        if self._llm is not None:
            return self._llm
        if self._own_llm is None:
            cache = self.options.llm_cache
            timeout = self.options.llm_timeout_s or ClientConfig.timeout_s
            self._own_llm = create_client(cache_path=cache, cache_enabled=cache is not None, timeout_s=timeout)
        return self._own_llm

    async def aclose(self) -> None:
        """Close what this context built, and stop its Gecko (and its adopted children's)."""
        try:
            for child in self._children:
                await child.aclose()
            if self._own_gecko is not None:
                await self._own_gecko.aclose()
            if self._own_llm is not None:
                await self._own_llm.aclose()
        finally:
            self._servers.close()
