"""The README links every notebook to Colab at the address configured in pyproject.toml."""

from pathlib import Path

from autograder.course import colab_url

ROOT = Path(__file__).resolve().parent.parent


def test_readme_has_an_open_in_colab_link_for_every_notebook():
    readme = (ROOT / "README.md").read_text()
    notebooks = sorted((ROOT / "release").glob("*/*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    missing = [p.relative_to(ROOT).as_posix() for p in notebooks
               if colab_url(p.relative_to(ROOT).as_posix()) not in readme]
    assert not missing, f"README.md lacks Colab links (from [tool.course]) for: {missing}"


def test_readme_quick_start_is_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [line.split("#")[0].strip() for line in quick.splitlines()[1:] if line.strip()]
    assert commands == ["make course", "make test"]
