"""The course on disk: its settings, layout, notebooks, points, grading folders, calendar and files.

The lowest layer above `autograder.probes`: it imports nothing of the grader but that
(docs/design.md, "Layers").
"""
