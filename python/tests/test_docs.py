"""test_docs.py: the examples in the package's docstring (help(dlscan)) run as written."""

import doctest

import dlscan


def test_package_docstring():
    result = doctest.testmod(dlscan)
    assert result.attempted > 0 and result.failed == 0
