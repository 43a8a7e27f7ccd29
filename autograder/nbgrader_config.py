"""The course's one nbgrader configuration; every setting carries its reason.

`python -m autograder` loads this file and then points `CourseDirectory.root` and `db_url` at
each job's own temporary course folder (see autograder/engine/nbgrader_setup.py). nbgrader's own command line
reads it too (nbgrader 0.9 has no --config option: it reads ./nbgrader_config.py), from a folder
whose nbgrader_config.py says `load_subconfig("autograder/nbgrader_config.py")`:

    PATH=.venv/bin:$PATH nbgrader autograde 01_numpy_mlp

Environment: AUTOGRADER_CELL_TIMEOUT (seconds per cell, default 60), AUTOGRADER_INTERRUPT_GRACE
(seconds, default 5), AUTOGRADER_KERNEL_MEMORY (default 4G; "none"), AUTOGRADER_KERNEL_PROCESSES
(default 512), AUTOGRADER_KERNEL_TMP (default 512M), AUTOGRADER_KERNEL_WRITES (default 512M),
AUTOGRADER_OUTPUT_LIMIT (default 8M), AUTOGRADER_KERNEL_CPU (CPU seconds, default 1200; 0: none),
AUTOGRADER_NOTEBOOK_BUDGET (seconds per notebook, default 600; 0: none). Kernels run in the
sandbox of autograder/engine/sandbox.py (GradingExecute.sandbox); docs/design.md's "Threat model" says
what it guarantees. Autograde's pipelines are declared here (GradingExecute in place of Execute, the cell
repairs), so nbgrader's own command line grades exactly as `python -m autograder grade` does
before its trusted run (autograder/engine/verify.py), which nbgrader has no place for.
"""

import os
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    GetGrades,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from autograder.engine.drop_duplicate_cells import DropDuplicateCells
from autograder.engine.execute import GradingExecute
from autograder.engine.hide_hidden_tests import HideHiddenTests
from autograder.engine.neutralize_markers import NeutralizeMarkers
from autograder.engine.quiet_stderr import QuietStderr
from autograder.engine.restore_missing_cells import RestoreMissingCells

c = get_config()  # noqa: F821 (injected by traitlets when it loads this file)

# -- Layout ----------------------------------------------------------------------------------------
# The repository is the course: nbgrader's source/ and release/ are ours.
ROOT = Path(__file__).resolve().parent.parent
c.CourseDirectory.root = str(ROOT)
# The course's name in the gradebook.
c.CourseDirectory.course_id = "pytorch-course"
# Everything nbgrader writes lives under the git-ignored build/, never beside source/.
c.CourseDirectory.db_url = f"sqlite:///{ROOT / 'build' / 'gradebook.db'}"
c.CourseDirectory.submitted_directory = "build/submitted"
c.CourseDirectory.autograded_directory = "build/autograded"
c.CourseDirectory.feedback_directory = "build/feedback"
c.CourseDirectory.solution_directory = "build/solution"
# Files copied beside a notebook: skip editor and Python droppings.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".DS_Store"]

# -- Generating the student version -----------------------------------------------------------------
# Test cells and the setup cell are read-only in the release; the checksum then restores them at
# grading time, which is also how hidden tests come back.
c.LockCells.lock_grade_cells = True
c.LockCells.lock_readonly_cells = True

# -- Autograding -----------------------------------------------------------------------------------
# nbgrader's two pipelines (nbgrader 0.9.6's defaults), with our steps in their places. Sanitizing:
# DropDuplicateCells instead of DeduplicateIds (that one keeps the last copy and leaves the others
# running as plain cells); RestoreMissingCells before OverwriteCells (a deleted test comes back
# from the source, in its place, and is then checked like every locked cell).
# NeutralizeMarkers after OverwriteCells: the marker words in a student's own cells become text
# (nbgrader finds its regions by substring, in every cell).
c.Autograde.sanitize_preprocessors = [ClearOutput, DropDuplicateCells, OverwriteKernelspec,
                                      RestoreMissingCells, OverwriteCells, NeutralizeMarkers,
                                      CheckCellMetadata]
# Grading: GradingExecute instead of Execute (a dead kernel keeps the points before it; memory,
# CPU and time limits; warm, sandboxed kernels when autograder/engine/nbgrader_setup.py says
# where); QuietStderr instead of IgnorePattern (the same drop, after noting the test cells nbgrader's own rule fails for
# their stderr: `check` holds the source notebook to that rule).
c.Autograde.autograde_preprocessors = [GradingExecute, QuietStderr, ClearMetadataPreprocessor,
                                       LimitOutput, SaveAutoGrades, AssignLatePenalties,
                                       CheckCellMetadata]
# The autograded notebook is written again after the trusted run (the points it withdraws, its
# report). nbgrader's default, 444, refuses that to a grader that is not root (root writes through
# it): every row of a plain user's `grade` ended in a PermissionError. The grader's own file, 644.
c.Autograde.permissions = 644
# nbgrader's default is 30 s per cell; our notebooks budget 60 s in all on a 2-core CPU, so one cell
# never legitimately needs more. An infinite loop is interrupted after this and scores 0 on its own
# cell only: the kernel is interrupted, not killed, and the rest of the notebook still runs (unless
# it ignores the interrupt: GradingExecute.interrupt_grace below).
c.Execute.timeout = int(os.environ.get("AUTOGRADER_CELL_TIMEOUT", "60"))
c.Execute.interrupt_on_timeout = True
# After the interrupt the kernel may take a while to answer (a cell stuck in C code, an import
# under load). nbgrader would then fail the whole notebook ("Timeout waiting for IOPub output");
# the cell has its timeout error already, so go on to the next one.
c.Execute.raise_on_iopub_timeout = False
# A flaky re-run would only hide a broken notebook (and double the time of a dead kernel).
c.Execute.execute_retries = 0
# Once the last cell has run, its outputs are saved: stop the kernel (and anything it started)
# at once rather than wait for a polite shutdown, sixty times per check.
c.Execute.shutdown_kernel = "immediate"
# A cell past its timeout that ignores the interrupt (signal.SIG_IGN on SIGINT, a long call in C)
# would make every later cell time out in turn: a 40-cell notebook, 40 minutes. After this grace
# the kernel is killed; the cells before keep their points, the later ones are not run.
c.GradingExecute.interrupt_grace = float(os.environ.get("AUTOGRADER_INTERRUPT_GRACE", "5"))
# Memory a kernel may allocate: all its processes together (its cgroup, autograder/engine/cgroups.py:
# three children of 2 GB each no longer fit under a per-process limit) and each one (RLIMIT_DATA:
# heap, arrays, tensors, not the address space torch only reserves, so that one cell asking for 50 GB
# gets a MemoryError at once instead of the cgroup's OOM kill). Measured (CPU): a kernel with torch,
# helpers and matplotlib imported holds 0.9 GiB, warm or cold (a warm kernel's pages are mostly the
# server's, charged there); the course's source notebooks peak at 0.9-1.5 GiB (07_finetune_resnet18
# the most). Not measured on a GPU, where CUDA's own host memory adds to it. 4G leaves room for a
# student's less frugal answer. "none": no limit.
c.GradingExecute.memory_limit = os.environ.get("AUTOGRADER_KERNEL_MEMORY", "4G")
# Tasks (processes and threads) of one kernel together, in its cgroup: ipykernel runs about 10
# threads, torch one per core, a DataLoader a few workers; a fork bomb stops here. 0: none.
c.GradingExecute.process_limit = int(os.environ.get("AUTOGRADER_KERNEL_PROCESSES", "512"))
# A kernel's private /tmp and /dev/shm (each; tmpfs, so memory, counted in its cgroup): DataLoader
# workers pass batches through /dev/shm, torch.compile caches in /tmp. Gone with the kernel.
c.GradingExecute.tmp_size = os.environ.get("AUTOGRADER_KERNEL_TMP", "512M")
# What a kernel may write into its job folder (a private layer over it that the grader never reads:
# a checkpoint, a plot saved to a file), and the largest file it may write anywhere (RLIMIT_FSIZE,
# the one limit on a file a kernel writes; the grader reads none of them).
c.GradingExecute.write_limit = os.environ.get("AUTOGRADER_KERNEL_WRITES", "512M")
# Outputs a notebook keeps (the autograded notebook, the feedback page): in all, and per output. The
# course's solutions keep under 1 MB each (08, its plots, the most); 8M leaves room for a student's
# extra plots, and a runaway print loop stops filling the grader's memory and the student's page.
c.GradingExecute.output_limit = os.environ.get("AUTOGRADER_OUTPUT_LIMIT", "8M")
c.GradingExecute.output_item_limit = "1M"
# CPU seconds per kernel (all its threads): a backstop behind the wall-clock budget for work that
# spins on many threads; at the limit the kernel dies, the points before it are kept. 0: none.
c.GradingExecute.cpu_limit = int(os.environ.get("AUTOGRADER_KERNEL_CPU", "1200"))
# Wall-clock seconds per notebook, kernel start included: ten times what a notebook needs (60 s on
# a 2-core CPU). A notebook of slow cells then costs at most this, not cells x timeout; the cells
# after it are not run and score 0. 0: none.
c.GradingExecute.notebook_budget = int(os.environ.get("AUTOGRADER_NOTEBOOK_BUDGET", "600"))
# Test cells fail by raising (helpers.checks raises CheckFailed). Output on stderr (a UserWarning
# from torch, a DeprecationWarning, a tqdm progress bar, logging) says nothing about the answer, but
# nbgrader zeroes any grade cell that wrote to stderr. IgnorePattern drops those stream outputs
# before grading; the pattern matches any stderr text. (QuietStderr is an IgnorePattern: this
# configures it.)
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"[\s\S]"
# Keep the feedback readable and the autograded notebooks small: a runaway print loop or a
# 500-frame recursion traceback is cut.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 40
# A student who deleted a test cell gets it back (nbgrader otherwise leaves its grade None and the
# notebook silently waiting for a manual grade): RestoreMissingCells above, not nbgrader's own
# restore, which raises KeyError when the cell before a deleted test is a read-only one.
c.RestoreMissingCells.enabled = True
c.OverwriteCells.add_missing_cells = False
# Students are created on the fly from the submission folders.
c.Autograde.create_student = True

# -- Feedback --------------------------------------------------------------------------------------
# nbgrader puts the autograded notebook, hidden tests included, into the feedback HTML. HideHiddenTests
# (nbgrader's ClearHiddenTests, plus: tracebacks of those cells cut to the error message) keeps the
# tests' source out of it; the student still reads each check's message.
c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor]
