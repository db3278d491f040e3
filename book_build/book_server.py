"""Serve the built book on 127.0.0.1 as a static web host would: text compressed.

Used by the browser tests and by ``make bench``, with the same Chromium flags
(``CHROMIUM_ARGS``). Static hosts (GitHub Pages,
Read the Docs, Netlify) send HTML, CSS, JavaScript and SVG gzip-compressed
to browsers that accept it, so what a reader downloads is the compressed
size; the browser reports both sizes (``encodedBodySize`` and
``decodedBodySize``). Responses are never cached, so every visit measures a
cold load.

    with serve(Path("_build/html")) as base:   # base = "http://127.0.0.1:PORT/"
        ...
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import sys
import threading
from pathlib import Path

COMPRESSED = {".html", ".css", ".js", ".svg", ".json", ".txt", ".map"}
# Headless Chromium reading the served book: without the background-networking flags it phones Google
# hosts on its own, which the browser tests would count as external requests.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


class _Handler(http.server.SimpleHTTPRequestHandler):
    compress = True

    def log_message(self, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def send_head(self):
        path = Path(self.translate_path(self.path))
        wants_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.compress and wants_gzip and path.suffix in COMPRESSED and path.is_file()):
            return super().send_head()
        body = _gzipped(path, path.stat().st_mtime_ns)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return None


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a browser that leaves a page, or closes, mid-download drops the connection: not an error of the server
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@functools.lru_cache(maxsize=512)
def _gzipped(path: Path, mtime_ns: int) -> bytes:
    return gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)


@contextlib.contextmanager
def serve(directory: Path, compress: bool = True):
    """Serve ``directory`` at an ephemeral port of 127.0.0.1; yield the base URL (ending in /)."""
    handler = functools.partial(type("Handler", (_Handler,), {"compress": compress}), directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
