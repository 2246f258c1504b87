"""A cache that is checked: a truncated, altered or unreadable entry is recomputed with one notice, never used.

Each case damages one file of the new project's cache (copied into ``workdir``) and rebuilds: the build
must succeed, print one ``notice: … failed its check …; recomputed`` line, and give exactly the state a
clean build gives (the database and the report compared whole, ``fleet_plan`` row by row).
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from .conftest import BUILD, econ, leftovers, ok, signature, workdir

pytestmark = pytest.mark.slow


def entry(root, analysis: str):
    (folder,) = [p for p in (root / "build" / "cache" / analysis).iterdir() if not p.name.startswith(".")]
    return folder


def truncate(path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])


def thousandfold_chips(path) -> None:
    """A valid Parquet file with other numbers: every chip count times 1,000 (97,152 became 97,152,000)."""
    with duckdb.connect() as con:
        columns = [r[0] for r in con.execute(f"describe select * from read_parquet('{path}')").fetchall()]
        chips = [c for c in columns if c.endswith("_chips")]
        assert chips, columns
        select = ", ".join(f"{c} * 1000 as {c}" if c in chips else c for c in columns)
        con.execute(f"copy (select {select} from read_parquet('{path}')) to '{path}.new' (format parquet)")
    shutil.move(f"{path}.new", path)


@pytest.mark.parametrize(
    ("damage", "target", "why"),
    [
        (truncate, "fleet_plan.parquet", "fleet_plan.parquet does not match its hash"),
        (thousandfold_chips, "fleet_plan.parquet", "fleet_plan.parquet does not match its hash"),
        (truncate, "tables.json", "tables.json does not match its hash"),
        (lambda p: p.unlink(), "manifest.json", "it has no manifest"),
        (lambda p: p.write_text("{not json"), "manifest.json", "its manifest cannot be read"),
        (lambda p: p.unlink(), "fleet_plan.parquet", "fleet_plan.parquet is missing"),
    ],
    ids=["truncated-parquet", "altered-parquet", "truncated-tables-json", "no-manifest", "bad-manifest", "missing"],
)
def test_a_damaged_analysis_entry_is_recomputed_with_a_notice(project, tmp_path, damage, target, why):
    root = workdir(project, tmp_path)
    damage(entry(root, "fleet_plan") / target)
    result = ok(econ(root, *BUILD))
    notices = [line for line in result.stderr.splitlines() if line.startswith("notice: ")]
    assert len(notices) == 1 and notices[0].startswith(
        f"notice: the cached result of analysis fleet_plan failed its check ({why}"
    )
    assert notices[0].endswith("; recomputed")
    assert "from the cache, 1 ran: fleet_plan " in result.stdout
    assert signature(root) == project.new_state and leftovers(root) == []
    second = ok(econ(root, *BUILD))  # and the entry is whole again
    assert second.stderr == "" and " ran" not in second.stdout.splitlines()[1]


def test_a_damaged_stored_report_site_is_drawn_again(project, tmp_path):
    root = workdir(project, tmp_path)
    (site,) = (root / "build" / "cache" / "site").iterdir()
    truncate(site / "fleet.html")
    result = ok(econ(root, *BUILD))
    assert (
        result.stderr
        == "notice: the cached report site failed its check (fleet.html does not match its hash); recomputed\n"
    )
    assert signature(root) == project.new_state and leftovers(root) == []


def test_the_manifest_lists_every_file_with_its_hash(project):
    import hashlib

    folder = entry(project.new, "fleet_plan")
    listed = json.loads((folder / "manifest.json").read_text())["sha256"]
    files = sorted(p.name for p in folder.iterdir() if p.name != "manifest.json")
    assert sorted(listed) == files
    assert all(hashlib.sha256((folder / f).read_bytes()).hexdigest() == listed[f] for f in files)
