"""Small result tables for the chapters: a real HTML ``<table>`` in the book and
in Jupyter, aligned plain text in a terminal.

    from posenc_course.tables import Table
    display(Table([(0, 1.0), (64, 0.1)], ["i", "omega_i"], caption="...", formats={"omega_i": ".4e"}))

Why not print aligned columns? In a narrow column (a phone, or the book's
article column) a wide text block is cut off or wraps mid-row; an HTML table
can wrap its cells and stays a table. No pandas: one small class, numbers
right-aligned, every cell escaped.
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Callable, Mapping, Sequence

from posenc_course.arguments import Anything, Dict, Either, InstanceOf, Items, Maybe, accepts, refuse

__all__ = ["Table", "show"]

Format = str | Callable[[object], str] | None

# Inline styles only: the table must look right in the book, JupyterLab, VS Code and Colab alike.
_TABLE_STYLE = "border-collapse:collapse;margin:0.25em 0 0.75em 0;font-size:0.9em;font-variant-numeric:tabular-nums"
_CAPTION_STYLE = "caption-side:top;text-align:left;padding:0 0 0.3em 0;font-size:0.95em;color:inherit"
_CELL_STYLE = "padding:0.2em 0.6em;border-bottom:1px solid rgba(128,128,128,0.35);vertical-align:top"
# The wrapper scrolls a table that is still wider than a phone's column; below 600 px the
# text and the padding shrink first, so that most tables fit without scrolling.
_WRAP_STYLE = "overflow-x:auto;max-width:100%"
_NARROW_CSS = (
    "@media (max-width:600px){table.pe-table{font-size:0.8em!important}"
    "table.pe-table th,table.pe-table td{padding:0.15em 0.35em!important}}"
)


ROWS = Anything("a list of rows (each a list of cells)")  # any iterable of rows: checked as they are read
HEADERS = Items(min_len=1, what="a non-empty list of column names")
CAPTION = Maybe(InstanceOf(str), "None or a string")
FORMATS = Maybe(Either(Dict(), Items()), "None, a mapping from a column to its format, or one format per column")
ALIGN = Maybe(InstanceOf(str), "None or one 'l' or 'r' per column")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


@accepts(rows=ROWS, headers=HEADERS, caption=CAPTION, formats=FORMATS, align=ALIGN)
class Table:
    """A table of ``rows`` under ``headers``.

    * ``formats``: how to write the cells of a column, either a mapping from a
      header (or a column index) to a format spec (``".3f"``, ``",d"``,
      ``".1e"``) or a function of the value, or a sequence with one entry per
      column (``None`` for the default). By default integers get thousands
      separators, other numbers four significant digits, ``None`` an empty cell.
    * ``align``: ``"l"``/``"r"`` per column (e.g. ``"lrr"``); by default a column
      is right-aligned when every value in it is a number.
    * ``caption``: a line above the table, saying what it shows.
    """

    def __init__(
        self,
        rows,
        headers,
        caption: str | None = None,
        formats: Mapping[str | int, Format] | Sequence[Format] | None = None,
        align: str | None = None,
    ):
        self.headers = tuple(str(h) for h in headers)
        width = len(self.headers)
        try:
            self.rows = tuple(tuple(row) for row in rows)
        except TypeError:
            refuse("rows", ROWS.text, rows)
        for n, row in enumerate(self.rows):
            if len(row) != width:
                refuse(
                    "rows",
                    message=f"rows[{n}] has {len(row)} cells but there are {width} headers {list(self.headers)}.",
                )
        self.caption = caption
        self._formats = self._column_formats(formats)
        if align is None:
            align = "".join(
                "r"
                if self.rows
                and all(_is_number(r[j]) or r[j] is None for r in self.rows)
                and any(_is_number(r[j]) for r in self.rows)
                else "l"
                for j in range(width)
            )
        if len(align) != width or set(align) - {"l", "r"}:
            refuse("align", f"one 'l' or 'r' per column ({width} columns)", align)
        self.align = align

    def _column_formats(self, formats) -> list[Format]:
        width = len(self.headers)
        if formats is None:
            return [None] * width
        if isinstance(formats, Mapping):
            out: list[Format] = [None] * width
            for key, spec in formats.items():
                if isinstance(key, int) and not isinstance(key, bool) and -width <= key < width:
                    out[key] = spec
                elif key in self.headers:
                    out[self.headers.index(key)] = spec
                else:
                    refuse(
                        "formats",
                        message=f"formats names an unknown column {key!r}; the columns are {list(self.headers)}.",
                    )
            return out
        if len(formats) != width:
            refuse("formats", f"a mapping or have one entry per column ({width})", formats)
        for n, spec in enumerate(formats):
            if not (spec is None or isinstance(spec, str) or callable(spec)):
                refuse(
                    "formats",
                    message=f"formats[{n}] must be None, a format spec such as '.3f' or a function, not {spec!r}.",
                )
        return list(formats)

    def cell(self, value, column: int) -> str:
        """The text of one cell."""
        spec = self._formats[column]
        if value is None:
            return ""
        if callable(spec):
            return str(spec(value))
        if spec is not None:
            return format(value, spec)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return f"{int(value):,}"
        if _is_number(value):
            return f"{value:.4g}"
        return str(value)

    def text_rows(self) -> list[list[str]]:
        """Every cell as it is shown, row by row."""
        return [[self.cell(v, j) for j, v in enumerate(row)] for row in self.rows]

    def _repr_html_(self) -> str:
        def td(tag, text, j):
            side = "right" if self.align[j] == "r" else "left"
            content = html.escape(text)
            if tag == "td" and self.align[j] == "r" and text:
                # a number never breaks inside ("1.1e-" / "14"); "0.5 (0.4–0.6)" may break at its space
                content = " ".join(f'<span style="white-space:nowrap">{html.escape(t)}</span>' for t in text.split(" "))
            return f'<{tag} style="{_CELL_STYLE};text-align:{side}">{content}</{tag}>'

        parts = [
            f'<div class="pe-table-wrap" style="{_WRAP_STYLE}"><style>{_NARROW_CSS}</style>',
            f'<table class="pe-table" style="{_TABLE_STYLE}">',
        ]
        if self.caption:
            parts.append(f'<caption style="{_CAPTION_STYLE}">{html.escape(self.caption)}</caption>')
        parts.append("<thead><tr>" + "".join(td("th", h, j) for j, h in enumerate(self.headers)) + "</tr></thead>")
        parts.append("<tbody>")
        for row in self.text_rows():
            parts.append("<tr>" + "".join(td("td", t, j) for j, t in enumerate(row)) + "</tr>")
        parts.append("</tbody></table></div>")
        return "\n".join(parts)

    def __repr__(self) -> str:
        body = self.text_rows()
        widths = [max([len(h)] + [len(r[j]) for r in body]) for j, h in enumerate(self.headers)]

        def line(cells):
            return "  ".join(
                c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, self.align)
            ).rstrip()

        lines = [self.caption] if self.caption else []
        lines += [line(self.headers), "  ".join("-" * w for w in widths)]
        lines += [line(r) for r in body]
        return "\n".join(lines)

    __str__ = __repr__


@accepts(rows=ROWS, headers=HEADERS, caption=CAPTION, formats=FORMATS, align=ALIGN)
def show(rows, headers, caption: str | None = None, formats=None, align: str | None = None) -> Table:
    """Display a :class:`Table` (in Jupyter; print it elsewhere) and return it."""
    table = Table(rows, headers, caption, formats=formats, align=align)
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is part of the course's environment
        print(table)
    else:
        display(table)
    return table
