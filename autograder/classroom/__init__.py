"""The term with students: `collect`, `export`, `feedback`, `gradescope`, LMS formats and results.

Imports the layers below it, never `autograder.authoring` (docs/design.md, "Layers").
"""
