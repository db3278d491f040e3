"""book_server: the book served as a static host serves it (gzip for text, never cached)."""

import gzip
import http.server
import socket
import struct
import time
import urllib.request

from book_build.book_server import _Server, serve


def _get(url, gzip_ok=True):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
    with urllib.request.urlopen(request) as response:
        return response.headers, response.read()


def test_text_is_sent_compressed_to_browsers_that_accept_it(tmp_path):
    page = "<!doctype html><p>" + "positional encoding " * 500 + "</p>"
    (tmp_path / "page.html").write_text(page)
    with serve(tmp_path) as base:
        headers, body = _get(f"{base}page.html")
        assert headers["Content-Encoding"] == "gzip"
        assert headers["Cache-Control"] == "no-store"
        assert int(headers["Content-Length"]) == len(body) < len(page) / 10
        assert gzip.decompress(body).decode() == page
        headers, body = _get(f"{base}page.html", gzip_ok=False)
        assert headers["Content-Encoding"] is None and body.decode() == page


def test_binary_files_and_missing_files_are_served_as_usual(tmp_path):
    (tmp_path / "image.png").write_bytes(b"\x89PNG" + bytes(range(256)))
    with serve(tmp_path, compress=True) as base:
        headers, body = _get(f"{base}image.png")
        assert headers["Content-Encoding"] is None and body.startswith(b"\x89PNG")
        try:
            _get(f"{base}missing.html")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
        else:
            raise AssertionError("a missing file was served")


def test_compression_can_be_switched_off(tmp_path):
    (tmp_path / "a.css").write_text("body { color: red }" * 100)
    with serve(tmp_path, compress=False) as base:
        headers, body = _get(f"{base}a.css")
        assert headers["Content-Encoding"] is None and len(body) == 1900


def test_a_browser_leaving_mid_download_is_not_reported_as_an_error(tmp_path, capfd):
    """A reader (or a benchmark) that navigates away drops its connection while a file is still being sent;
    the server must not print a traceback for it (make bench printed BrokenPipeError tracebacks)."""
    (tmp_path / "big.bin").write_bytes(bytes(32 * 2**20))  # served uncompressed, in many writes
    with serve(tmp_path) as base:
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        client = socket.create_connection((host, int(port)))
        client.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        assert client.recv(1024).startswith(b"HTTP/1.0 200")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        client.close()
        time.sleep(0.5)  # the server's next writes fail
        _get(f"{base}big.bin", gzip_ok=False)  # and it still serves
    assert "Traceback" not in capfd.readouterr().err


def test_other_errors_of_a_request_are_still_reported(capsys):
    server = _Server(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    try:
        try:
            raise ValueError("a bug in a handler")
        except ValueError:
            server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    assert "ValueError: a bug in a handler" in capsys.readouterr().err
