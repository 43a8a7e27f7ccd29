"""The Sphinx configuration of the course website (what a conf.py would hold), each setting with
its reason. autograder.authoring.site passes it to Sphinx as overrides, with no conf.py on disk."""

from __future__ import annotations


def sphinx_config(title: str, repository_url: str, branch: str) -> dict:
    """Settings for a site titled `title` whose notebooks live in the GitHub repository
    `repository_url` (the student repository, on `branch`)."""
    return {
        "project": title,
        "html_title": title,
        "language": "en",
        "extensions": [
            "myst_nb",  # notebooks (.ipynb) and MyST markdown (.md) as pages
            "autograder.authoring.site.mathml",  # math as MathML: no MathJax from a CDN
            "sphinx.ext.githubpages",  # .nojekyll: GitHub Pages serves _static/ as it is
        ],
        # The lecture notebooks arrive executed by autograder.authoring.site.execute (nbclient), which
        # names the cell that raised and leaves the old site in place; myst-nb only renders.
        "nb_execution_mode": "off",
        "myst_enable_extensions": ["dollarmath", "amsmath"],  # $...$ and $$...$$ as math
        "html_math_renderer": "mathml",
        # GitHub-style anchors for the headings, so that `[...](#a-terms-calendar)` in the
        # instructor's guide resolves as it does on GitHub.
        "myst_heading_anchors": 3,
        # A page's source holds what the page leaves out (the setup cell, an assignment's code
        # cells): it is not copied to the site, nor linked.
        "html_copy_source": False,
        "html_show_sourcelink": False,
        "html_theme": "sphinx_book_theme",
        "html_theme_options": {
            "repository_url": repository_url,
            "repository_branch": branch,
            "use_repository_button": True,  # a link to the student repository on every page
            "use_download_button": False,  # it would offer the source, which is not copied
            "home_page_in_toc": False,  # the site's title above the sidebar leads home
            "show_navbar_depth": 1,
        },
        # The site is rebuilt whole by every `site` run: no date that changes on each build.
        "html_last_updated_fmt": None,
    }
