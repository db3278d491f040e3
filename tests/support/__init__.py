"""Helpers the test modules share (test modules never import each other); each is listed, with what it holds, in
the README's table of modules."""
