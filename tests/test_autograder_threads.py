"""Grading kernels share the cores instead of each taking all of them."""

from autograder import engine


def test_each_kernel_gets_its_share_of_the_cores(monkeypatch):
    for name in engine.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(engine, "default_jobs", lambda: 8)
    assert engine.limit_kernel_threads(4) == 2
    assert all(engine.os.environ[name] == "2" for name in engine.THREAD_VARIABLES)


def test_never_below_one_thread_and_the_instructors_setting_wins(monkeypatch):
    for name in engine.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(engine, "default_jobs", lambda: 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert engine.limit_kernel_threads(16) == 1
    assert engine.os.environ["OMP_NUM_THREADS"] == "3"
    assert engine.os.environ["MKL_NUM_THREADS"] == "1"
