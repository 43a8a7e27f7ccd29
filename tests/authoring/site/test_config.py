"""The site's Sphinx settings: what makes it build offline, render without a CDN, and hold no source."""

from __future__ import annotations

from autograder.authoring.site.config import sphinx_config


def test_the_site_links_the_student_repository_and_copies_no_source():
    config = sphinx_config("PyTorch course", "https://github.com/uni/course-student", "term/2027")
    assert (config["project"], config["html_title"]) == ("PyTorch course", "PyTorch course")
    theme = config["html_theme_options"]
    assert (theme["repository_url"], theme["repository_branch"]) == ("https://github.com/uni/course-student",
                                                                      "term/2027")
    assert theme["use_repository_button"] and not theme["use_download_button"]
    assert config["html_copy_source"] is False and config["html_show_sourcelink"] is False


def test_maths_are_mathml_notebooks_are_not_executed_again_and_no_build_date_changes():
    config = sphinx_config("t", "https://github.com/a/b", "main")
    assert config["html_math_renderer"] == "mathml"
    assert "autograder.authoring.site.mathml" in config["extensions"]
    assert "sphinx.ext.mathjax" not in config["extensions"]
    assert config["nb_execution_mode"] == "off"
    assert config["html_last_updated_fmt"] is None
    assert {"dollarmath", "amsmath"} <= set(config["myst_enable_extensions"])
