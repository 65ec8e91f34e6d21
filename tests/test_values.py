"""The book's substitutions (book.values): providers' keys are text, filled once."""
import json
import sys
import types

import pytest

from albert_rerun.book import values as V


def _provider(monkeypatch, name, result):
    module = types.ModuleType(name)
    module.values = lambda profile: result
    monkeypatch.setitem(sys.modules, name, module)
    return f"{name}:values"


def test_values_are_merged_and_written_as_text(monkeypatch, tmp_path):
    a = _provider(monkeypatch, "prov_a", {"cost": "+0.15"})
    b = _provider(monkeypatch, "prov_b", {"seeds": "11"})
    monkeypatch.setattr(V, "PROVIDERS", (a, b))
    path = V.write_values(tmp_path, "smoke")
    assert json.loads(path.read_text()) == {"cost": "+0.15", "seeds": "11"}


def test_a_key_filled_twice_or_a_raw_number_is_an_error(monkeypatch):
    a = _provider(monkeypatch, "prov_c", {"cost": "+0.15"})
    b = _provider(monkeypatch, "prov_d", {"cost": "+0.20"})
    monkeypatch.setattr(V, "PROVIDERS", (a, b))
    with pytest.raises(ValueError, match="cost"):
        V.compute("smoke")
    monkeypatch.setattr(V, "PROVIDERS", (_provider(monkeypatch, "prov_e", {"x": 0.15}),))
    with pytest.raises(TypeError, match="format them at display"):
        V.compute("smoke")
