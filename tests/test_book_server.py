"""book_server: the book served as a static host serves it (gzip for text, never cached)."""

import gzip
import urllib.request

from book_server import serve


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
