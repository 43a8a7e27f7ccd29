"""Reference implementations of the graded exercises, one module per assignment.

Used by the instructor tools, hidden tests, `tests/` and the lecture notebooks; left out
of the package built for students. Import from the module, e.g.
`from helpers.reference.numpy_mlp import mlp_backward`.
"""
