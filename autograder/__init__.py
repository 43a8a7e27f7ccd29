"""The course's grader: `python -m autograder` (autograder/__main__.py) and the layers below it
(autograder/layers.py)."""

import sys

# jsonschema, which nbformat imports to validate notebooks, imports rfc3987_syntax where it is
# installed (jupyter-events asks for jsonschema[format-nongpl]); that module builds a Lark grammar
# when imported: about 1.2 s of CPU in every process that reads a notebook (each command, grading
# worker and test process; measured with `python -X importtime -m autograder grade --help`). A None
# in sys.modules makes that import fail at once; jsonschema then leaves the "iri" and
# "iri-reference" formats unchecked, which no notebook or nbgrader schema uses. A module imported
# before this line is kept; the kernel server takes the entry out again before it forks a kernel
# (autograder/engine/kernel_server.py), so that a student's kernel imports what it finds.
SKIPPED_IMPORTS = ("rfc3987_syntax",)
sys.modules.update({name: None for name in SKIPPED_IMPORTS if name not in sys.modules})
