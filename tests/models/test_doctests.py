"""The model modules' docstring examples (worked examples from the papers) run as tests."""

import doctest
import importlib

import pytest

MODULES = ["common", "exact", "emd", "kanonymity", "ldiversity", "closeness", "proximity", "epsilon", "registry"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(f"veil.models.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"veil.models.{name} has no examples"
    assert result.failed == 0
