"""The install is the same every day: every dependency is bounded below its next major, ``requirements.lock`` pins
one version of each within its bounds, and the suite runs on exactly those versions (``.ci/run``'s second job runs
it on the newest versions the bounds allow and sets ``ECON_UNLOCKED=1``)."""

from __future__ import annotations

import os
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent


def requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    named = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        named += extra
    return [Requirement(r) for r in named]


def locked() -> dict[str, Version]:
    pins = {}
    for number, line in enumerate((REPO / "requirements.lock").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep and version, f"requirements.lock:{number}: {line!r} is not NAME==VERSION"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def upper_bound(requirement: Requirement) -> Version | None:
    bounds = [Version(s.version) for s in requirement.specifier if s.operator in ("<", "<=", "==", "~=")]
    return min(bounds) if bounds else None


def lower_bound(requirement: Requirement) -> Version | None:
    bounds = [Version(s.version) for s in requirement.specifier if s.operator in (">", ">=", "==", "~=")]
    return max(bounds) if bounds else None


def next_major(version: Version) -> Version:
    """The release a bound must stay below: the next major, or for 0.x the next minor (0.x minors break)."""
    return Version(f"0.{version.minor + 1}") if version.major == 0 else Version(f"{version.major + 1}")


@pytest.mark.parametrize("requirement", requirements(), ids=str)
def test_every_dependency_is_locked_and_bounded_below_the_next_major_after_the_lock(requirement):
    pins = locked()
    name = canonicalize_name(requirement.name)
    assert name in pins, f"{requirement.name} is not in requirements.lock: run .ci/lock"
    pinned = pins[name]
    assert requirement.specifier.contains(pinned), f"requirements.lock pins {name} {pinned} outside {requirement}"
    bound = upper_bound(requirement)
    assert bound is not None, f"{requirement} has no upper bound"
    assert bound <= next_major(pinned), f"{requirement} admits a major release after the locked {pinned}: untested"
    lower = lower_bound(requirement)
    locked_minor = Version(f"{pinned.major}.{pinned.minor}")
    assert lower is not None and lower >= locked_minor, (
        f"{requirement} admits releases before the locked {pinned} that no job tests: start it at {locked_minor}"
    )


def test_the_lock_names_no_package_twice_and_only_exact_versions():
    lines = [x for x in (REPO / "requirements.lock").read_text(encoding="utf-8").splitlines() if x and x[0] != "#"]
    names = [canonicalize_name(x.partition("==")[0]) for x in lines]
    assert len(names) == len(set(names)) and all("==" in x for x in lines)


@pytest.mark.skipif(os.environ.get("ECON_UNLOCKED") == "1", reason="the newest-versions job of .ci/run")
def test_the_suite_runs_on_the_locked_versions():
    """What the README's command installed is what the lock says (a lock that drifted fails here, not for a user)."""
    installed = {canonicalize_name(d.metadata["Name"]): Version(d.version) for d in metadata.distributions()}
    drifted = {name: (str(v), str(installed.get(name))) for name, v in locked().items() if installed.get(name) != v}
    assert not drifted, f"installed versions differ from requirements.lock (locked, installed): {drifted}"


def test_the_readme_commands_install_from_the_lock():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/pip install -c requirements.lock -e . && .venv/bin/econ build" in readme
    command = "python3.11 -m venv .venv && .venv/bin/pip install -c requirements.lock -e '.[test]' && .venv/bin/pytest"
    assert command in readme and command in (REPO / ".ci" / "run").read_text(encoding="utf-8")
