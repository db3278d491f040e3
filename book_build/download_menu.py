"""An entry of our own in a page's download menu (the theme's menu of .ipynb, .pdf and "print this page").

The whole-book PDF (``book_pdf.py``) and the practice kit (``book_kit.py``) are offered this way: the
entry is a link with the theme's button classes, placed after "print this page".
"""

from __future__ import annotations

import html
import re
from pathlib import Path

ENTRY = """      <li><a href="{href}" download
   class="btn btn-sm {css} dropdown-item"
   title="{title}">
<span class="btn__icon-container"><i class="{icon}"></i></span>
<span class="btn__text-container">{label}</span>
</a></li>
"""
# the book's own entries: the practice kit (book_kit.py) and the whole book (book_pdf.py); icon_fonts.py keeps
# their icons when it cuts the fonts
KIT = dict(
    css="btn-download-practice-kit-button",
    icon="fas fa-file-zipper",
    label="practice kit .zip",
    title="Download every practice notebook with the course library and how to install it",
)
PDF = dict(
    css="btn-download-book-pdf-button",
    icon="fas fa-book",
    label="book .pdf",
    title="Download the whole book as one PDF",
)
PRINT_BUTTON = re.compile(r'(<li>\s*<button onclick="window\.print\(\)".*?</li>\n)', re.S)


def offer(page: Path, *, href: str, css: str, icon: str, label: str, title: str) -> int:
    """Give ``page`` the entry (once: a page that has an entry of class ``css`` is left alone).

    Returns 1 when the entry was added, 0 when the page had it already or has no download menu.
    """
    text = page.read_text(encoding="utf-8")
    if css in text:
        return 0
    entry = ENTRY.format(href=html.escape(href), css=css, icon=icon, label=html.escape(label), title=html.escape(title))
    new, n = PRINT_BUTTON.subn(lambda m: m.group(1) + entry, text, count=1)
    if n:
        page.write_text(new, encoding="utf-8")
    return n
