"""Many submissions: the grading session, where jobs run, the journal, `grade` and `bench`.

Imports the engine and the course, nothing above (docs/design.md, "Layers").
"""
