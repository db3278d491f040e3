"""What only builds the book (never installed): the Sphinx extension ``book_build.book_assets`` and its helpers."""
