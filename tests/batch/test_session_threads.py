"""Grading kernels share the cores instead of each taking all of them."""

import os

from autograder.batch import session as engine


def test_each_kernel_gets_its_share_of_the_cores_and_the_environment_comes_back(monkeypatch):
    for name in engine.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(engine, "default_jobs", lambda: 8)
    with engine.limit_kernel_threads(4) as share:
        assert share == 2
        assert all(os.environ[name] == "2" for name in engine.THREAD_VARIABLES)
    assert not any(name in os.environ for name in engine.THREAD_VARIABLES)


def test_never_below_one_thread_and_the_instructors_setting_wins(monkeypatch):
    for name in engine.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(engine, "default_jobs", lambda: 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    with engine.limit_kernel_threads(16) as share:
        assert share == 1
        assert os.environ["OMP_NUM_THREADS"] == "3"
        assert os.environ["MKL_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "3"
