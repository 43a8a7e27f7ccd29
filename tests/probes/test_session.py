"""The grader's side of the trusted run (autograder/probes/session.py): what a kernel says is read bounded,
and a conversation with a kernel that lies, stalls or stops costs that kernel's exercise only."""

from __future__ import annotations

import base64
import io
import json
import threading
import tracemalloc

import numpy as np
import pytest

from autograder.probes.caller import DONE, PREFIX, Caller, converse
from autograder.probes.session import (
    ERROR,
    REPLY_CHARS,
    Conversation,
    Refused,
    decode_message,
)


def npy(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode()


def test_an_array_whose_header_promises_gigabytes_is_refused_before_anything_is_allocated():
    """A few bytes of .npy whose header says (1 << 31,) float64: refused on its header, in no memory."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": (1 << 31,)})
    lie = base64.b64encode(buffer.getvalue() + b"\0" * 64).decode()
    tracemalloc.start()
    with pytest.raises(Refused, match="do not match"):
        decode_message(json.dumps({"seq": 1, "results": [{"nd": lie}]}))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20, peak


@pytest.mark.parametrize("result, words", [
    ({"nd": npy(np.array([1 + 2j]))}, "not plain data"),
    ({"nd": npy(np.zeros(17 << 20, dtype=np.uint8))}, "more values"),
    ([0] * 300_000, "more values"),
    ("x" * (1 << 17), "a string of"),
    ({"pickle": "gASV"}, "not plain data"),
    ({"nd": "not base64!"}, "not base64"),
])
def test_a_reply_that_is_not_plain_data_within_the_bounds_is_refused(result, words):
    with pytest.raises(Refused, match=words):
        decode_message(json.dumps({"seq": 1, "results": [result]}))


def test_nesting_and_size_are_bounded_before_parsing_goes_deep():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(Refused):
        decode_message('{"seq": 1, "results": [' + deep + "]}")
    with pytest.raises(Refused, match="at most"):
        decode_message(" " * (REPLY_CHARS + 1))


def kernel(conversation: Conversation, names: dict, exercises: list[str]) -> threading.Thread:
    """A stand-in kernel: the caller's own conversation, one exercise after another, in a thread."""
    def main():
        caller = Caller(names, None)
        for exercise in exercises:
            converse(caller, exercise, conversation)
    thread = threading.Thread(target=main)
    thread.start()
    return thread


def run_double(k, inputs, record):
    record("out", k.answers.double(k.value(inputs["x"])))


def test_a_conversation_records_what_the_students_function_returned():
    conversation = Conversation({"double": run_double}, {"x": np.arange(3.0)})
    kernel(conversation, {"double": lambda x: x * 2}, ["double"]).join(10)
    outputs = conversation.finish()
    assert outputs["double/out"].tolist() == [0.0, 2.0, 4.0]


def test_a_kernel_that_answers_with_another_requests_number_fails_that_exercise_alone():
    conversation = Conversation({"double": run_double, "other": run_double}, {"x": np.arange(3.0)})

    def lying(prompt: str) -> str:
        answer = conversation(prompt)
        if answer != DONE and '"seq":1' in answer.replace(" ", ""):
            message = json.loads(prompt[len(PREFIX):])
            if message.get("ready") == "double":
                return conversation(PREFIX + json.dumps({"seq": 99, "results": [[1.0, 2.0, 3.0]]}))
        return answer

    caller = Caller({"double": lambda x: x * 2}, None)
    converse(caller, "double", lying)
    converse(caller, "other", conversation)
    outputs = conversation.finish()
    assert "does not belong" in str(outputs[f"double/{ERROR}"])
    assert outputs["other/out"].tolist() == [0.0, 2.0, 4.0]


def test_a_kernel_that_stops_answering_leaves_its_exercise_unrecorded_and_the_grader_free():
    conversation = Conversation({"double": run_double}, {"x": np.arange(3.0)})
    assert conversation(PREFIX + json.dumps({"ready": "double"})).startswith("{")  # the request; no reply ever
    outputs = conversation.finish()
    assert str(outputs[f"double/{ERROR}"]).startswith("stopped")


def test_a_refused_reply_fails_its_exercise_and_says_why():
    conversation = Conversation({"double": run_double}, {"x": np.arange(3.0)})
    conversation(PREFIX + json.dumps({"ready": "double"}))
    answer = conversation(PREFIX + json.dumps({"seq": 1, "results": [{"nd": npy(np.array([1j]))}]}))
    assert answer == DONE
    assert "not plain data" in str(conversation.finish()[f"double/{ERROR}"])


def test_an_exercise_is_run_once_and_an_unknown_one_never():
    conversation = Conversation({"double": run_double}, {"x": np.arange(3.0)})
    kernel(conversation, {"double": lambda x: x * 2}, ["double", "double", "nothing"]).join(10)
    assert sorted(conversation.finish()) == ["double/out"]


def test_served_data_goes_to_the_probes_feed_and_the_conversation_to_the_probe():
    asked = []
    conversation = Conversation({}, {}, served=lambda prompt: asked.append(prompt) or "batch")
    assert conversation("challenge 0 next") == "batch" and asked == ["challenge 0 next"]
    assert Conversation({}, {})("challenge 0 next") == "refused"
