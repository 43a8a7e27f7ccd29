"""The course's distribution (pyproject.toml) ships every file of autograder/ that a command reads."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_file_of_the_grader_that_is_not_a_module_is_package_data():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["packages"]["find"].get("namespaces", True)  # folders without __init__.py ship
    shipped = set()
    for package, patterns in setuptools.get("package-data", {}).items():
        folder = ROOT / package.replace(".", "/")
        assert folder.is_dir(), package
        for pattern in patterns:
            shipped.update(p.relative_to(ROOT).as_posix() for p in folder.glob(pattern) if p.is_file())
    data = [p.relative_to(ROOT).as_posix() for p in (ROOT / "autograder").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".py", ".pyc")]
    assert "autograder/authoring/site/templates/index.md.j2" in data
    assert sorted(set(data) - shipped) == []
