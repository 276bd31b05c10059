"""One registry for stores, deciders and embedders: names in code, then installed packages' entry
points (a real .dist-info on sys.path), and the decider a --decider / --url pair names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from recallwise import deciders, stores
from recallwise.cli import main
from recallwise.deciders import NO_DECIDER, available_deciders, from_spec, register_decider
from recallwise.errors import UsageError
from recallwise.registry import DECIDERS_GROUP, STORES_GROUP, Registry
from recallwise.testing import ScriptedDecider


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package declaring a store scheme and two deciders (one that cannot be imported), and fresh
    copies of the two registries, so what it adds lives only for the test."""
    site = tmp_path / "site"
    (site / "thirdparty_backends").mkdir(parents=True)
    (site / "thirdparty_backends" / "__init__.py").write_text(
        textwrap.dedent(
            """
            from recallwise.testing import InMemoryStore, ScriptedDecider

            def open_memo(url, embedder=None, **options):
                return InMemoryStore(embedder=embedder)

            def make_decider(url=None):
                return ScriptedDecider(0.8, name=f"thirdparty at {url}")
            """
        )
    )
    info = site / "thirdparty_backends-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-backends\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[recallwise.stores]\nmemo = thirdparty_backends:open_memo\nsqlite = thirdparty_backends:open_memo\n"
        "[recallwise.deciders]\nthirdparty = thirdparty_backends:make_decider\n"
        "broken = no_such_module:make\nembedded = thirdparty_backends:make_decider\n"
    )
    for module, attribute, kind, group in (
        (stores, "_SCHEMES", "store URL scheme", STORES_GROUP),
        (deciders.registry, "_REGISTRY", "decider", DECIDERS_GROUP),
    ):
        fresh: Registry[object] = Registry(kind, group)
        fresh._entries = dict(getattr(module, attribute)._entries)
        monkeypatch.setattr(module, attribute, fresh)
    monkeypatch.syspath_prepend(str(site))


def test_an_installed_package_adds_a_store_and_a_decider_by_entry_point(installed: None) -> None:
    store = stores.open_store("memo://anything")
    assert type(store).__name__ == "InMemoryStore"
    store.close()
    assert "thirdparty" in available_deciders() and "broken" in available_deciders()
    decider = from_spec("thirdparty", "http://127.0.0.1:9")
    assert isinstance(decider, ScriptedDecider) and decider.name == "thirdparty at http://127.0.0.1:9"
    # a name recallwise registers itself is never replaced by an installed package
    assert type(stores.open_store("sqlite://:memory:")).__name__ == "SQLiteStore"
    assert from_spec("embedded").name == "embedded"
    # a package that cannot be imported breaks its own name only, with one clear line
    with pytest.raises(
        UsageError, match=r"decider 'broken' \(entry point 'no_such_module:make' in recallwise\.deciders\)"
    ):
        from_spec("broken")


def test_none_and_stock_mean_no_decider_and_nothing_else_does() -> None:
    assert NO_DECIDER == ("none", "stock")
    assert from_spec("none") is None and from_spec("stock", None) is None
    with pytest.raises(UsageError, match="stock behaviour and calls no backend"):
        from_spec("none", "http://127.0.0.1:9")
    with pytest.raises(UsageError, match=r"unknown decider 'nope'; available: .*embedded.*\(or none / stock"):
        from_spec("nope")
    with pytest.raises(UsageError, match="is taken"):
        register_decider("none", lambda **_: ScriptedDecider())
    with pytest.raises(UsageError, match="unknown store URL scheme 'nope'"):
        stores.open_store("nope://x")


def test_the_cli_reads_a_decider_name_through_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--decider", "nope", "--json"]) == 2
    assert "unknown decider 'nope'" in capsys.readouterr().err
