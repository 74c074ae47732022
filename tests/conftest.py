"""Test-suite rules: a test that starts a process (a script, a worker pool) is marked `slow`.

`pytest -m "not slow"` is the fast lane (under 2 minutes on 2 cores); `.ci/run` runs all.
The guard below makes the rule hold: in a test without the mark, starting a
subprocess or a process pool fails the test with a message saying to mark it.
"""

from __future__ import annotations

import multiprocessing.context
import platform
import subprocess

import pytest

# The processor name is read once per process by running `uname -p` (SB3's save asks for it). Read it
# here, before the guard, so that a test saving a model does not fail or pass by the order tests ran in.
platform.processor()


class UnmarkedProcessError(AssertionError):
    pass


def _refuse(*args, **kwargs):
    raise UnmarkedProcessError("this test starts a process: mark it @pytest.mark.slow (see tests/conftest.py)")


@pytest.fixture(autouse=True)
def _processes_only_in_slow_tests(request, monkeypatch):
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setattr(subprocess.Popen, "__init__", _refuse)
        monkeypatch.setattr(multiprocessing.context.SpawnProcess, "_Popen", staticmethod(_refuse))
        monkeypatch.setattr(multiprocessing.context.ForkServerProcess, "_Popen", staticmethod(_refuse))
        monkeypatch.setattr(multiprocessing.context.ForkProcess, "_Popen", staticmethod(_refuse))
    yield


@pytest.fixture
def one_torch_thread():
    """torch on one thread for the test, as `evaluate.py`'s workers and the trainers run it: a small network's
    forward passes on a busy machine only contend for threads (milliseconds each instead of microseconds)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
