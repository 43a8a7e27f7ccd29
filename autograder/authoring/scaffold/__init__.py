"""What `python -m autograder new NN_topic` copies into a course: real files, linted like the rest.

    reference.py        -> helpers/reference/<topic>.py
    probe.py            -> grading/NN_topic/probe.py
    mutants/*.py        -> grading/NN_topic/mutants/
    variants/*.py       -> grading/NN_topic/variants/
    notebook/*.py, *.md -> the cells of source/NN_topic/NN_topic.ipynb, in file-name order

`NN_topic` and `helpers.reference.topic` are replaced by the new assignment's names.
"""
