"""The scan of printed pages for a code frame left empty at the foot of a page (book_build/book_pdf.py); the
whole book's PDF is scanned in tests/test_book.py, with and without the print rule that prevents them."""

import numpy as np

from book_build.book_pdf import EMPTY_LIMIT, SHADED, empty_frame_share

WHITE, GREY, INK = 255, (SHADED[0] + SHADED[1]) // 2, 40


def page(rows=200, width=120):
    gray = np.full((rows, width), WHITE, dtype=np.uint8)
    gray[10:40, 10:110] = INK  # some text at the top
    return gray


def test_a_page_of_text_has_no_empty_frame():
    assert empty_frame_share(page()) == 0.0
    assert empty_frame_share(np.full((200, 120), WHITE, dtype=np.uint8)) == 0.0


def test_an_empty_frame_at_the_foot_is_measured_left_border_and_all():
    gray = page()
    gray[130:190, 8:112] = GREY  # the frame: 60 rows of 200
    gray[130:190, 8] = INK  # its left border
    assert abs(empty_frame_share(gray) - 60 / 200) < 0.01


def test_a_frame_with_lines_in_it_is_not_empty():
    gray = page()
    gray[130:190, 8:112] = GREY
    gray[135:188:6, 14:90] = INK  # lines of code down to the frame's last rows of padding
    assert 0 < empty_frame_share(gray) < EMPTY_LIMIT
