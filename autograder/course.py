"""The course's own settings: `[project]` and `[tool.course]` in pyproject.toml."""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parent.parent


def _pyproject(root: Path = REPO_ROOT) -> dict:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def project_metadata(root: Path = REPO_ROOT) -> dict:
    """`[project]`: name, version, dependencies."""
    return _pyproject(root)["project"]


def course_settings(root: Path = REPO_ROOT) -> dict:
    """`[tool.course]`: repository, branch, helpers_wheel_url."""
    return _pyproject(root)["tool"]["course"]


def colab_url(notebook: str, root: Path = REPO_ROOT) -> str:
    """The Open-in-Colab address of a notebook path relative to the repository root."""
    settings = course_settings(root)
    return (f"https://colab.research.google.com/github/{settings['repository']}/blob/"
            f"{settings['branch']}/{notebook}")
