"""parity.backends' registry: a BACKENDS entry names a Backend class, or the lookup says which entry is wrong."""

from __future__ import annotations

import pytest

from parity import backends


def test_every_registered_entry_is_a_backend_class():
    assert all(issubclass(cls, backends.Backend) for cls in backends.registered())
    assert isinstance(backends.get_backend("interpret"), backends.Backend)


def test_an_entry_naming_something_else_is_refused_by_name(monkeypatch):
    """Control: an entry naming a module's function, not a Backend class, fails with the entry in the message."""
    monkeypatch.setitem(backends.BACKENDS, "not-a-tier", "parity.backends:parse_backend")
    backends.backend_class.cache_clear()
    try:
        with pytest.raises(TypeError, match=r"BACKENDS\['not-a-tier'\] = 'parity.backends:parse_backend'"):
            backends.get_backend("not-a-tier")
        with pytest.raises(TypeError, match="not a parity Backend class"):
            backends.backend_class("not-a-tier")
    finally:
        backends.backend_class.cache_clear()
