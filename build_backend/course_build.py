"""The build backend of this repository's distribution, `pytorch-course`: setuptools', except that
a wheel or an sdist of it (`pip wheel .`, `pip install .`, `python -m build`) is refused unless
asked for by name.

That distribution holds the answers (helpers/reference/: a reference per graded exercise) and the
grader. The editable install that make, CI and the docs run (`pip install -e .`) makes no file to
hand out; a plain build makes `pytorch_course-*.whl`, which looks like the course's package and can
be attached to a student release by mistake. Students get the wheel `python -m autograder wheel`
builds (pytorch_course_helpers, without helpers.reference). Where the whole wheel is wanted on
purpose (Gradescope's autograder zip, `make oldest-torch`), ALLOW=1 in the environment.
"""

from __future__ import annotations

import os
import sys

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F403  (every other hook, as setuptools defines it)

ALLOW = "PYTORCH_COURSE_INSTRUCTOR_BUILD"
REFUSAL = """
This builds {what} of the instructor's distribution, pytorch-course: it holds helpers/reference
(the answers) and the grader. Students get the package `python -m autograder wheel` builds
(build/dist/pytorch_course_helpers-*.whl, without the answers). To work on the course, install it
editable: pip install -e '.[dev]' (what `make` does). To build this one anyway, for your own
machines only: {allow}=1 pip wheel .
"""


def _refuse(what: str) -> None:
    if os.environ.get(ALLOW) != "1":
        print(REFUSAL.format(what=what, allow=ALLOW), file=sys.stderr)
        raise SystemExit(1)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _refuse("a wheel")
    return build_meta.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    _refuse("a source archive")
    return build_meta.build_sdist(sdist_directory, config_settings)
