"""What only maintainers run (never installed): from the repository's root, ``python -m tools.NAME``."""
