"""docs/tables.md and docs/formulas.md are made from the declarations: they must be current (python -m econ.catalog)."""

from __future__ import annotations

import pytest

from econ import catalog


@pytest.mark.parametrize("name", sorted(catalog.DOCUMENTS))
def test_docs_are_current(name):
    assert (catalog.DOCS / name).read_text(encoding="utf-8") == catalog.DOCUMENTS[name](), (
        f"docs/{name} is stale: run python -m econ.catalog"
    )


def test_every_formula_is_in_the_formulas_table_and_the_docs():
    formulas = catalog.frames()["formulas"]
    assert formulas.height == len(catalog.all_formulas()) > 100
    text = (catalog.DOCS / "formulas.md").read_text(encoding="utf-8")
    assert all(f"`{name.rsplit('.', 1)[1]}`" in text for name in formulas["function"])


def test_every_result_column_is_documented():
    text = (catalog.DOCS / "tables.md").read_text(encoding="utf-8")
    for _, table in catalog.declared_tables():
        assert f"## `{table.name}`" in text
