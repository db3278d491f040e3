"""The test suite: a package, so that its shared helpers are imported as ``tests.support``."""
