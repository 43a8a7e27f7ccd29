"""The grader's side of the trusted run: probes drive the kernel's fixed caller from here.

A probe's `run(k, inputs, record)` (grading/<assignment>/probe.py) is ordinary Python that runs in the
grading process. `k` is a `Session`: `k.answers.relu(h)` does not call anything here, it returns a `Ref`,
a handle on what the call returns in the kernel; operations on refs (attributes, items, calls, the
arithmetic operators) queue operations for autograder/probes/caller.py, sent in one batch when a value is
needed (`k.fetch(ref)`, or the end of the exercise for what `record` was given). So an exercise costs a
round trip or two however many calls it makes, and nothing the kernel computes is believed but what the
student's functions returned: the probe records those raw values and judges them here.

The same session drives the reference (`local_channel`: the caller's own code, in this process, over a
module's names), so the kernel and the reference are asked the same calls and answer in the same form.

What comes back is decoded within fixed bounds (`decode_reply`): the prompt's size, the arrays' kinds and
sizes (headers read before any array is built), the number of values; anything else refuses the reply.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import math
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.probes.caller import DONE, PREFIX, Caller, plain

ERROR = "__error__"  # the record of an exercise whose calls raised (or whose run stopped)

# Bounds on what one reply of a kernel may hold: characters of its prompt, values, array elements of
# all its arrays together, and the characters of one string. A reply past them is refused whole.
REPLY_CHARS = 96 << 20
REPLY_VALUES = 200_000
REPLY_ELEMENTS = 16 << 20
STRING_CHARS = 1 << 16
# Bounds on what one submission's trusted run hands back in all (records of every exercise).
TOTAL_ELEMENTS = 32 << 20
RECORDS_PER_EXERCISE = 20_000
_KINDS = "biufUS"  # booleans, integers, floats, strings: nothing else is plain data


class Raised(Exception):
    """A value the kernel could not give: the student's code raised (the message is its first line)."""


class Stopped(Exception):
    """The exercise's conversation ended before its calls did (time limit, kernel death, a refused reply)."""


class Refused(ValueError):
    """A reply that is not plain data within the bounds."""


@dataclass(frozen=True)
class Opaque:
    """An object the kernel handed back that is not plain data: only its type's name is known."""

    type_name: str

    def __str__(self) -> str:
        return f"<{self.type_name}>"


# -- refs ------------------------------------------------------------------------------------------------------

class Ref:
    """A value held in the kernel. Attributes, items, calls and operators make new refs (nothing runs until a
    fetch); `k.fetch(ref)` hands back the value as plain data. Dunder names go through `ref.attr(name)`."""

    __slots__ = ("_session", "_id")

    def __init__(self, session: Session, handle: int):
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_id", handle)

    def __getattr__(self, name: str) -> Ref:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # protocols (copy, pickle, NumPy) must not become kernel calls
        return self.attr(name)

    def attr(self, name: str) -> Ref:
        return self._session._op("attr", self._id, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError("set a kernel value's attribute with k.setattr(ref, name, value)")

    def __getitem__(self, key: Any) -> Ref:
        return self._session._op("item", self._id, self._session._encode(key))

    def __call__(self, *args: Any, **kwargs: Any) -> Ref:
        session = self._session
        return session._op("call", self._id, [session._encode(a) for a in args],
                           {k: session._encode(v) for k, v in kwargs.items()})

    def __iter__(self):
        raise TypeError("a kernel value cannot be iterated here: fetch it, index it, or k.unpack(ref, n)")

    def __bool__(self):
        raise TypeError("a kernel value has no truth here: fetch it first")

    def __repr__(self) -> str:
        return f"<kernel value #{self._id}>"


def _operator(name: str, reflected: bool = False):
    def method(self: Ref, other: Any = None) -> Ref:
        function = self._session.module("operator").attr(name)
        if other is None and name in ("neg", "pos", "abs", "invert"):
            return function(self)
        return function(other, self) if reflected else function(self, other)
    return method


for _name, _op in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("matmul", "matmul"), ("truediv", "truediv"),
                   ("floordiv", "floordiv"), ("mod", "mod"), ("pow", "pow")):
    setattr(Ref, f"__{_name}__", _operator(_op))
    setattr(Ref, f"__r{_name}__", _operator(_op, reflected=True))
for _name in ("neg", "pos", "abs"):
    setattr(Ref, f"__{_name}__", _operator(_name))


# -- the session ---------------------------------------------------------------------------------------------

class Session:
    """One exercise's calls into a kernel (or into the reference, in this process) through `channel`.

    channel(request) -> reply: request is the JSON text of {"seq", "ops"}; reply the decoded kernel message
    ({"seq", "results"[, "stopped"]}). Raises Stopped when the conversation is over.
    served: the probe's feed of served data (Probe.serve), whose count of what it handed out is the
    grader's own, or None."""

    def __init__(self, channel: Callable[[str], dict], served: Any = None):
        self._channel = channel
        self.served = served
        self._ops: list[list] = []
        self._waiting: list[Callable[[Any], None]] = []  # one per queued fetch, in order
        self._next = 0
        self._seq = 0
        self.answers = self._op("answers")

    # what the probes use ------------------------------------------------------------------------------------
    def module(self, name: str) -> Ref:
        """A module imported in the kernel (torch, numpy, builtins, operator, helpers.data, ...)."""
        return self._op("import", name)

    @property
    def given(self) -> Ref:
        """The assignment's stand-ins (grading/<assignment>/given.py), as the kernel loaded them."""
        return self._op("given")

    def value(self, value: Any) -> Ref:
        """A copy of `value` (arrays, numbers, strings, lists, dicts) in the kernel."""
        return self._op("value", self._encode(value))

    def tensor(self, array: Any, dtype: str | None = None, requires_grad: bool = False) -> Ref:
        """torch.tensor(array) in the kernel (a copy), of `dtype` ("float32"...) when given."""
        torch = self.module("torch")
        kwargs = {"dtype": torch.attr(dtype)} if dtype else {}
        t = torch.tensor(np.asarray(array), **kwargs)
        return t.requires_grad_(True) if requires_grad else t

    def setattr(self, target: Ref, name: str, value: Any) -> None:
        self._op("setattr", target._id, name, self._encode(value), out=False)

    def setitem(self, target: Ref, key: Any, value: Any) -> None:
        self._op("setitem", target._id, self._encode(key), self._encode(value), out=False)

    @contextmanager
    def using(self, manager: Ref) -> Iterator[Ref]:
        """`with manager as value:` in the kernel, around the operations queued inside the block."""
        entered = self._op("enter", manager._id)
        try:
            yield entered
        finally:
            self._op("exit", manager._id, out=False)

    def unpack(self, ref: Ref, n: int) -> list[Ref]:
        """ref[0], ..., ref[n - 1]: a returned tuple taken apart (`a, b = k.unpack(f(x), 2)`)."""
        return [ref[i] for i in range(n)]

    def type_name(self, ref: Ref) -> Ref:
        return self.module("builtins").type(ref).attr("__name__")

    def len(self, ref: Ref) -> Ref:
        return self.module("builtins").len(ref)

    def isinstance(self, ref: Ref, cls: Ref) -> Ref:
        return self.module("builtins").isinstance(ref, cls)

    def fetch(self, ref: Any) -> Any:
        """The value of `ref` now, as plain data (Raised when the student's code raised making it)."""
        box: list = []
        self.later(ref, box.append)
        self.flush()
        value = box[0]
        if isinstance(value, Raised):
            raise value
        return value

    def later(self, ref: Any, receive: Callable[[Any], None]) -> None:
        """Queue a fetch of `ref` at this point of the calls; `receive` gets its value (a Raised when it
        failed) at the next flush. A list, tuple or dict holding refs is fetched whole; a plain value
        (no ref in it) is received at once."""
        if not isinstance(ref, Ref):
            if not _holds_ref(ref):
                receive(ref)
                return
            ref = self.value(ref)
        self._ops.append(["fetch", None, ref._id])
        self._waiting.append(receive)

    def flush(self) -> None:
        """Send what is queued; hand each fetched value to its receiver."""
        if not self._ops:
            return
        ops, waiting = self._ops, self._waiting
        self._ops, self._waiting = [], []
        self._seq += 1
        reply = self._channel(json.dumps({"seq": self._seq, "ops": ops}, separators=(",", ":")))
        if reply.get("seq") != self._seq:
            raise Stopped("the kernel's answer does not belong to the grader's request")
        results = reply.get("results", [])
        for index, receive in enumerate(waiting):
            if index >= len(results):
                raise Stopped(f"stopped: {reply.get('stopped') or 'the kernel handed back fewer values than asked'}")
            result = results[index]
            receive(Raised(result["error"]) if _is_error(result) else result)
        if reply.get("stopped"):
            raise Stopped(f"stopped: {reply['stopped']}")

    # the protocol ---------------------------------------------------------------------------------------------
    def _op(self, kind: str, *args: Any, out: bool = True) -> Ref | None:
        handle = None
        if out:
            self._next += 1
            handle = self._next
        self._ops.append([kind, handle, *args])
        return Ref(self, handle) if out else None

    def _encode(self, value: Any) -> Any:
        if isinstance(value, Ref):
            if value._session is not self:
                raise ValueError("a ref of another session")
            return {"ref": value._id}
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            return float(value) if math.isfinite(value) else {"float": repr(float(value))}
        if isinstance(value, np.ndarray):
            buffer = io.BytesIO()
            np.save(buffer, value, allow_pickle=False)
            return {"nd": base64.b64encode(buffer.getvalue()).decode("ascii")}
        if isinstance(value, list):
            return [self._encode(v) for v in value]
        if isinstance(value, tuple):
            return {"tuple": [self._encode(v) for v in value]}
        if isinstance(value, dict):
            return {"dict": [[self._encode(k), self._encode(v)] for k, v in value.items()]}
        if isinstance(value, slice):
            return {"slice": [self._encode(value.start), self._encode(value.stop), self._encode(value.step)]}
        raise TypeError(f"cannot send a {type(value).__name__} to the kernel: send arrays, numbers, strings")


def _holds_ref(value: Any) -> bool:
    if isinstance(value, Ref):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_ref(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_ref(k) or _holds_ref(v) for k, v in value.items())
    return False


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and set(result) == {"error"}


# -- decoding what a kernel says, within bounds ---------------------------------------------------------------

def decode_message(text: str) -> dict:
    """A kernel's message (the prompt after PREFIX) as plain data; Refused past the bounds."""
    if len(text) > REPLY_CHARS:
        raise Refused(f"a reply of {len(text) >> 20} MiB; at most {REPLY_CHARS >> 20} MiB are read")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise Refused(f"not a reply: {type(error).__name__}") from None
    if not isinstance(message, dict):
        raise Refused("not a reply")
    budget = {"values": REPLY_VALUES, "elements": REPLY_ELEMENTS}
    decoded = {}
    for key, value in message.items():
        if key == "results":
            if not isinstance(value, list):
                raise Refused("results is not a list")
            decoded[key] = [_decode(v, budget, 0) for v in value]
        elif key in ("ready", "stopped") and isinstance(value, str):
            decoded[key] = value[:300]
        elif key == "seq" and isinstance(value, int):
            decoded[key] = value
    return decoded


def _count(budget: dict, values: int = 1, elements: int = 0) -> None:
    budget["values"] -= values
    budget["elements"] -= elements
    if budget["values"] < 0 or budget["elements"] < 0:
        raise Refused("a reply holding more values than any probe asks for")


def _decode(data: Any, budget: dict, depth: int) -> Any:
    if depth > 32:
        raise Refused("values nested too deep")
    _count(budget)
    if data is None or isinstance(data, (bool, int, float)):
        return data
    if isinstance(data, str):
        if len(data) > STRING_CHARS:
            raise Refused(f"a string of {len(data)} characters")
        return data
    if isinstance(data, list):
        return [_decode(v, budget, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise Refused("not plain data")
    (tag, value), = data.items()
    if tag == "nd" and isinstance(value, str):
        return _array(value, budget)
    if tag == "tuple" and isinstance(value, list):
        return tuple(_decode(v, budget, depth + 1) for v in value)
    if tag == "dict" and isinstance(value, list):
        out = {}
        for pair in value:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Refused("not a dict")
            key = _decode(pair[0], budget, depth + 1)
            out[key if isinstance(key, (str, int, float, bool, type(None))) else str(key)] = \
                _decode(pair[1], budget, depth + 1)
        return out
    if tag == "float" and value in ("nan", "inf", "-inf") or tag == "float" and isinstance(value, (int, float)):
        return float(value)
    if tag in ("object", "error") and isinstance(value, str):
        text = value[:300]
        return Opaque(text) if tag == "object" else {"error": text}
    raise Refused("not plain data")


def _array(text: str, budget: dict) -> np.ndarray:
    """An .npy in base64, its header read first: plain kinds only, its size within the budget."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Refused("an array that is not base64") from None
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        reader = (np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = reader(stream)
    except (ValueError, OSError) as error:
        raise Refused(f"not an array: {error}") from None
    if dtype.kind not in _KINDS or dtype.itemsize > 4096 or dtype.hasobject:
        raise Refused(f"an array of {dtype}, not plain data")
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if size < 0 or len(raw) - stream.tell() != size * dtype.itemsize:
        raise Refused("an array whose bytes do not match its header")
    _count(budget, 0, size)
    return np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)


# -- records -------------------------------------------------------------------------------------------------

def as_record(value: Any) -> np.ndarray:
    """What `record` keeps of a fetched value: one plain array (None as the string "None", a type as its
    name in angle brackets), as the judges compare them."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, Raised):
        raise value
    if value is None:
        return np.asarray("None")
    if isinstance(value, Opaque):
        return np.asarray(str(value))
    if isinstance(value, dict):
        raise TypeError("got a dict, not numbers, booleans or strings")
    if isinstance(value, (list, tuple)):
        value = [as_record(v) for v in value]
    array = np.array(value)
    if array.dtype == object:
        raise TypeError("got a mix of values that is not one array of numbers or strings")
    return array


def as_fetched(value: Any) -> Any:
    """`value` as it would arrive from a kernel (tensors as arrays, other objects as Opaque): for values
    computed here that are compared with fetched ones."""
    return decode_message(json.dumps({"results": [plain(value)]}))["results"][0]


def run_exercise(run: Callable, session: Session, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run one exercise's probe through `session`; its records (key -> array), ERROR when a call raised,
    the conversation stopped, or a record is not plain data (the first such, as it happened)."""
    records: dict[str, np.ndarray] = {}

    def keep(key: str):
        def receive(value):
            if ERROR in records:
                return
            try:
                records[key] = as_record(value)
            except (Raised, TypeError) as error:
                records[ERROR] = np.asarray(str(error)[:300])
        return receive

    def record(key: str, value: Any) -> None:
        session.later(value, keep(key))

    try:
        run(session, dict(inputs), record)
        session.flush()
    except Raised as error:
        records.setdefault(ERROR, np.asarray(str(error)[:300]))
    except Stopped as error:
        records.setdefault(ERROR, np.asarray(str(error)[:300]))
    except Refused as error:
        records.setdefault(ERROR, np.asarray(f"handed back what is not plain data ({error})"[:300]))
    if len(records) > RECORDS_PER_EXERCISE:
        return {ERROR: np.asarray(f"more than {RECORDS_PER_EXERCISE} records")}
    return records


# -- the channel into this process (the reference, tests) ----------------------------------------------------

def local_channel(namespace: Mapping[str, Any], given=None, numpy_only: bool = False) -> Callable[[str], dict]:
    """A channel to the caller run in this process over `namespace`: the kernel's own code, without the kernel."""
    caller = Caller(namespace, given, numpy_only)

    def channel(request: str) -> dict:
        message = json.loads(request)
        results, stopped = caller.run(message["ops"])
        reply = {"seq": message["seq"], "results": results, **({"stopped": stopped} if stopped else {})}
        return decode_message(json.dumps(reply))

    return channel


# -- the channel into a kernel: the executor's feed ----------------------------------------------------------

_ABANDON = object()
_END = object()
DRIVER_WAIT = 600.0  # seconds the feed waits on a probe's next request (the probe's own work, here)


class _Driver:
    """One exercise's run, in a thread of its own: its requests wait for the kernel's replies."""

    def __init__(self, run: Callable, inputs: Mapping[str, np.ndarray], served: Any = None):
        self.served = served
        self.requests: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()
        self.records: dict[str, np.ndarray] = {}
        self.thread = threading.Thread(target=self._main, args=(run, inputs), daemon=True)
        self.thread.start()

    def _channel(self, request: str) -> dict:
        self.requests.put(request)
        reply = self.replies.get()
        if reply is _ABANDON:
            raise Stopped("stopped: the kernel ended the check before this exercise's calls did (its time "
                          "limit, a crash, or code that interfered)")
        if isinstance(reply, Refused):
            raise reply
        return reply

    def _main(self, run: Callable, inputs: Mapping[str, np.ndarray]) -> None:
        try:
            self.records = run_exercise(run, Session(self._channel, self.served), inputs)
        except Exception as error:  # noqa: BLE001 - what came back was not what the probe could read
            self.records = {ERROR: np.asarray(f"handed back something the grader could not use "
                                              f"({type(error).__name__}: {error})"[:300])}
        finally:
            self.requests.put(_END)

    def next_request(self) -> str:
        try:
            item = self.requests.get(timeout=DRIVER_WAIT)
        except queue.Empty:
            return DONE
        return DONE if item is _END else item

    def abandon(self) -> None:
        self.replies.put(_ABANDON)
        self.thread.join(timeout=DRIVER_WAIT)


class Conversation:
    """The grader's answers to one kernel's input() requests in the trusted run (execute.GradingExecute's
    feed): the conversation with the caller (PREFIX), and the probe's served data (Probe.serve) otherwise.

    runs: exercise -> run(k, inputs, record); inputs: what the probes may send (no private input)."""

    def __init__(self, runs: Mapping[str, Callable], inputs: Mapping[str, np.ndarray],
                 served: Callable[[str], str] | None = None):
        self.runs, self.inputs, self.served = dict(runs), inputs, served
        self.drivers: dict[str, _Driver] = {}
        self.current: _Driver | None = None
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        if not prompt.startswith(PREFIX):
            return self.served(prompt) if self.served is not None else "refused"
        with self.lock:
            try:
                message = decode_message(prompt[len(PREFIX):])
            except Refused as error:
                if self.current is not None:
                    self.current.replies.put(error)
                    self.current.next_request()  # the probe ends on the refusal
                return DONE
            if "ready" in message:
                self._abandon_current()
                name = message["ready"]
                if name not in self.runs or name in self.drivers:
                    return DONE
                self.current = self.drivers[name] = _Driver(self.runs[name], self.inputs, self.served)
            elif self.current is None:
                return DONE
            else:
                self.current.replies.put(message)
                if message.get("stopped"):
                    self.current.next_request()
                    return DONE
            request = self.current.next_request()
            if request == DONE:
                self.current = None
            return request

    def _abandon_current(self) -> None:
        if self.current is not None:
            self.current.abandon()
            self.current = None

    def finish(self) -> dict[str, np.ndarray]:
        """End every exercise still talking; their records as exercise/key -> array, bounded in all."""
        with self.lock:
            self._abandon_current()
        outputs: dict[str, np.ndarray] = {}
        total = 0
        for name, driver in self.drivers.items():
            driver.thread.join(timeout=DRIVER_WAIT)
            records = driver.records
            size = sum(int(np.asarray(v).size) for v in records.values())
            if total + size > TOTAL_ELEMENTS:
                records = {ERROR: np.asarray(f"handed back more than {TOTAL_ELEMENTS} numbers in all")}
            total += size
            outputs.update({f"{name}/{key}": value for key, value in records.items()})
        return outputs

