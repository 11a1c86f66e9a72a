"""The registries (``veil.registry``): what the source declares — read without importing, for ``veil --help``
and lazy dispatch — is what importing the modules registers; a declaration is found, an unknown name is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil import registry
from veil.registry import BACKENDS, MODELS, STRATEGIES, Registry


@pytest.mark.parametrize("reg", [STRATEGIES, BACKENDS, MODELS], ids=lambda r: r.kind)
def test_what_the_source_declares_is_what_imports_register(reg: Registry) -> None:
    declared = reg.declared()
    assert declared and set(reg.load_all()) == set(declared)
    assert all(reg.get(name) is reg.load_all()[name] for name in declared)


def test_names_in_declaration_order_and_aliases() -> None:
    assert STRATEGIES.names() == ("optimal", "incognito", "brute-force")
    assert "postgres" in BACKENDS and "postgres" not in BACKENDS.names() and "postgres" in BACKENDS.names(aliases=True)
    with pytest.raises(KeyError):
        STRATEGIES.get("fastest")


def test_a_new_entry_is_one_decorator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "a.py").write_text(
        'from veil.registry import Registry\n\n@THINGS.register("x", "y")\ndef f(): ...\n'
    )
    monkeypatch.setattr(registry, "PACKAGE", tmp_path)
    things: Registry[object] = Registry("thing", "THINGS", "veil.plugins")
    assert things.declared() == {"x": ("veil.plugins.a", False), "y": ("veil.plugins.a", True)}
    assert list(things) == ["x"]
    registered = things.register("z")(len)
    assert registered is len and things.get("z") is len


def test_a_model_type_is_written_once_on_its_registration() -> None:
    """``MODELS`` sets each class's ``type`` to the name it registered; the module declaring it is the one imported."""
    for name, cls in MODELS.load_all().items():
        assert cls.type == name and MODELS.declared()[name][0] == cls.__module__


def test_a_reloaded_module_registers_again_and_a_second_definition_is_refused() -> None:
    things: Registry[object] = Registry("thing", "THINGS", "veil.plugins")

    def make() -> type:
        class Thing:  # the same module and qualified name each time: what importlib.reload produces
            pass

        return Thing

    first, again = make(), make()
    things.register("thing")(first)
    things.register("thing")(again)  # a reload: the newer definition replaces the older
    other = type("Other", (), {})
    with pytest.raises(ValueError, match="thing 'thing' is registered twice"):
        things.register("thing")(other)


def test_every_entry_comes_in_the_order_the_source_declares_it_whatever_was_imported_first() -> None:
    import veil.models.risk  # noqa: F401  (imported out of order, as another test might)

    assert list(MODELS.load_all()) == list(MODELS.names())
