"""The grading folder of an assignment: its probe, mutants, variants and wrong answers, read and checked."""

from __future__ import annotations

import pytest

from autograder.course.grading_folder import (
    SampleError,
    files,
    folder,
    load_probe,
    parse_sample,
    probe_for,
    probe_path,
    samples,
)
from autograder.probes import ProbeError


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_fixtures_folder_is_read_whole(fixture_course):
    root = fixture_course.root
    assert folder(root, "00_fixture") == root / "grading" / "00_fixture"
    assert probe_path(root, "00_fixture").name == "probe.py"
    assert [p.stem for p in files(root, "00_fixture", "mutants")] == [
        "add_instead_of_multiply", "drops_the_sign", "mean_of_absolute_values", "sum_not_mean"]
    assert files(root, "00_fixture", "wrong") == []  # no such folder: none
    (variant,) = samples(root, "00_fixture", "variants")
    assert (variant.name, variant.exercise, variant.note) == ("scale_multiply", "scale", "scale through np.multiply.")
    assert "np.multiply(x, factor)" in variant.code and variant.message == "" and variant.may_lose == ()
    probe = probe_for("00_fixture", root)
    assert probe.assignment == "00_fixture" and set(probe.exercises) == {"scale", "mean_square"}
    assert probe_for("09_none", root) is None
    with pytest.raises(ValueError, match="kind must be one of"):
        files(root, "00_fixture", "probes")


def test_a_probe_file_without_probe_or_for_another_folder_is_refused(tmp_path):
    with pytest.raises(ProbeError, match=r"defines no PROBE = Probe\(...\)"):
        load_probe(write(tmp_path / "grading" / "01_a" / "probe.py", "PROBE = 3\n"))
    wrong = write(tmp_path / "grading" / "01_b" / "probe.py",
                  "from autograder.probes import Exercise, Probe\n\nPROBE = Probe(assignment='01_a', "
                  "make_inputs=lambda rng: {}, exercises={'f': Exercise(lambda k, inputs, record: None, expected=dict)})\n")
    with pytest.raises(ProbeError, match="PROBE.assignment is '01_a'; the folder is '01_b'"):
        load_probe(wrong)
    with pytest.raises(ZeroDivisionError):  # the probe's own error, and no half-loaded module left
        load_probe(write(tmp_path / "grading" / "01_c" / "probe.py", "1 / 0\n"))
    import sys
    assert "grading_probe_01_c" not in sys.modules


def test_a_wrong_answer_names_its_exercise_and_the_words_its_failure_must_say(tmp_path):
    wrong = write(tmp_path / "wrong" / "adds.py", '"""scale adds."""\n# exercise: scale\n# message: multiply\n\n'
                  "def scale(x, factor):\n    return x + factor\n")
    sample = parse_sample(wrong)
    assert (sample.exercise, sample.message, sample.note) == ("scale", "multiply", "scale adds.")
    challenge = write(tmp_path / "variants" / "tiers.py", '"""a smaller net."""\n# exercise: challenge\n'
                      "# may lose: test_tier_2, test_tier_3\n\nnet = 1\n")
    assert parse_sample(challenge).may_lose == ("test_tier_2", "test_tier_3")


@pytest.mark.parametrize("kind,text,message", [
    ("variants", '"""x."""\n\ndef scale(x, f):\n    return x * f\n', "missing the line '# exercise:"),
    ("wrong", '"""x."""\n# exercise: scale\n\ndef scale(x, f):\n    return x\n', "missing the line '# message:"),
    ("variants", '"""x."""\n# exercise: scale\n', "no code after the header"),
])
def test_a_sample_that_breaks_the_format_names_the_file_and_the_fix(tmp_path, kind, text, message):
    path = write(tmp_path / kind / "bad.py", text)
    with pytest.raises(SampleError, match=message) as error:
        parse_sample(path)
    assert str(path) in str(error.value)
