"""One submission in, one result out: nbgrader driven, its preprocessors, kernels, sandbox,
scan, trusted run and feedback HTML.

Imports `autograder.course` and `autograder.probes`, nothing above (docs/design.md, "Layers").
Empty on purpose: the kernel launcher (`python -I -m autograder.engine.kernel_server`) imports it.
"""
