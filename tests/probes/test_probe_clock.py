"""08's stand-in clock is the answer's alone: the kernel's other threads read the real clocks, uncounted.

ipykernel's own threads read time.monotonic and time.time while an answer runs (more often on a busy
machine). Counted as the answer's readings, they made the judge take a right answer timed by a real clock
(clock_gettime) for one timed by the stand-in, and hold it to the stand-in's tight bound: under a busy
`make test` it lost its points (18 ms median against the 14 ms bound).
"""

from __future__ import annotations

import threading
import time

from probe_harness import assignment


def test_another_threads_readings_are_real_and_not_counted():
    clock = assignment("08_gpu_batch_timing").probe.given_module().Clock()
    seen = {}

    def other_thread():
        seen["monotonic"], seen["time"], seen["ns"] = time.monotonic(), time.time(), time.perf_counter_ns()

    with clock.active():
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        mine = time.perf_counter()
    assert clock.reads == 1 and mine == clock.now  # the answer's thread reads the stand-in
    assert abs(seen["monotonic"] - time.monotonic()) < 5 and abs(seen["time"] - time.time()) < 5
    assert abs(seen["ns"] - time.perf_counter_ns()) < 5e9
