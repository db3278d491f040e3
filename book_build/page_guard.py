"""The guard on every page a browser test or a tool opens: requests to any host but the local server are aborted
and recorded, and so are missing local files (HTTP status >= 400), failed requests, uncaught page errors and console
errors."""

from __future__ import annotations

from urllib.parse import urlsplit

LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
# Console messages of type "error" that are not failures. Keep this list short and explain each entry.
BENIGN_CONSOLE = [
    # Chromium logs every request we abort on purpose; the request itself is recorded as external.
    "net::ERR_BLOCKED_BY_CLIENT",
]
# Failed requests that are not failures (none so far).
BENIGN_FAILED_URLS: set[str] = set()


class Guard:
    """Blocks and records requests to other hosts; records missing files and errors.

    Attach it to a browser context before opening pages::

        guard = Guard(context)
        page = context.new_page(); guard.watch(page)

    With Playwright's async API: ``guard = Guard(context, async_api=True); await guard.route_async(context)``.
    """

    def __init__(self, context, allowed_hosts=LOCAL_HOSTS, benign_console=BENIGN_CONSOLE, async_api=False):
        self.allowed_hosts = set(allowed_hosts)
        self.benign_console = list(benign_console)
        self.external: list[str] = []  # requests to another host (aborted)
        self.missing: list[str] = []  # local responses with status >= 400
        self.failed: list[str] = []  # local requests that failed (network level)
        self.page_errors: list[str] = []  # uncaught exceptions in the page
        self.console_errors: list[str] = []  # console.error and friends, minus the benign ones
        self.requests = 0
        if not async_api:  # with the async API, await guard.route_async(context)
            context.route("**/*", self._route)

    async def route_async(self, context):
        async def handler(route):
            local = self._admit(route.request.url)
            try:
                await (route.continue_() if local else route.abort("blockedbyclient"))
            except Exception:  # the page or context closed while the request was in flight
                pass

        await context.route("**/*", handler)

    def watch(self, page):
        page.on("response", self._response)
        page.on("requestfailed", self._request_failed)
        page.on("pageerror", lambda exc: self.page_errors.append(f"{page.url}: {exc}"))
        page.on("console", self._console)
        return page

    def is_local(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return True
        return parts.hostname in self.allowed_hosts or f"[{parts.hostname}]" in self.allowed_hosts

    def _admit(self, url: str) -> bool:
        """Count a request, record it if it leaves this host; True when it may go on."""
        self.requests += 1
        local = self.is_local(url)
        if not local:
            self.external.append(url)
        return local

    def _route(self, route):
        local = self._admit(route.request.url)
        try:
            route.continue_() if local else route.abort("blockedbyclient")
        except Exception:  # the page or context closed while the request was in flight
            pass

    def _response(self, response):
        if response.status >= 400 and self.is_local(response.url):
            self.missing.append(f"{response.status} {response.url}")

    def _request_failed(self, request):
        if request.url in BENIGN_FAILED_URLS:
            return
        if self.is_local(request.url):
            self.failed.append(f"{request.failure} {request.url}")

    def _console(self, message):
        if message.type not in ("error", "assert"):
            return
        text = message.text
        if any(benign in text for benign in self.benign_console):
            return
        if "Failed to load resource" in text:  # duplicates a missing file already recorded
            return
        location = message.location.get("url", "") if message.location else ""
        self.console_errors.append(f"{text} ({location})")

    def problems(self) -> dict[str, list[str]]:
        return {
            "external requests": self.external,
            "missing local files": self.missing,
            "failed requests": self.failed,
            "page errors": self.page_errors,
            "console errors": self.console_errors,
        }

    def reset(self):
        for value in self.problems().values():
            value.clear()
