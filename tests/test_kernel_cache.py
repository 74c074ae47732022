"""numba's on-disk cache follows every kernel module's source (`quiddler_env/core/kernel_cache.py`).

numba stamps a cached function with its own file only, while its stored code holds copies of the
functions it calls from other files: without the package's locator, a change to one kernel module
leaves the cached callers elsewhere running the old code.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

from quiddler_env.core import kernel_cache

PACKAGE = kernel_cache.PACKAGE_DIR


def _copy_package(into: Path) -> Path:
    copy = into / PACKAGE.name
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_every_cached_kernel_is_stamped_with_every_kernel_source():
    checked = 0
    for path in kernel_cache.kernel_sources():
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.__module__ == name and value._cache is not None:
                locator = value._cache._impl.locator
                assert isinstance(locator, kernel_cache.KernelCacheLocator), (name, value.__name__)
                assert locator.get_source_stamp()[1] == kernel_cache.kernel_sources_digest()
                checked += 1
    assert checked > 50, checked  # the engine's kernels, the solver's, the features'


def test_the_kernel_sources_are_the_files_that_ask_numba_to_cache():
    names = {p.relative_to(PACKAGE).as_posix() for p in kernel_cache.kernel_sources()}
    assert {"core/solver_kernel.py", "core/batch_kernels.py", "core/batch_bots.py", "features.py"} <= names
    assert "core/kernel_cache.py" not in names and "envs/gym_env.py" not in names


def test_the_digest_changes_with_any_kernel_source_and_only_with_them(tmp_path):
    copy = _copy_package(tmp_path)
    before = kernel_cache.kernel_sources_digest(copy)
    assert before == kernel_cache.kernel_sources_digest(PACKAGE)  # the path inside the package, not the folder
    other = copy / "envs" / "gym_env.py"
    other.write_text(other.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert kernel_cache.kernel_sources_digest(copy) == before
    for relative in ("core/solver_kernel.py", "features.py"):
        source = copy / relative
        text = source.read_text(encoding="utf-8")
        source.write_text(text + "\n# edited\n", encoding="utf-8")
        assert kernel_cache.kernel_sources_digest(copy) != before, relative
        source.write_text(text, encoding="utf-8")
        assert kernel_cache.kernel_sources_digest(copy) == before


_CHILD = """
import numpy as np
from quiddler_env.core import batch, batch_kernels
slots = np.arange(4, dtype=np.int64)
episodes = np.zeros(4, dtype=np.int64)
got = batch._streams(np.uint64(7), slots, episodes)  # batch.py's kernel, calling batch_kernels.game_stream
want = [batch_kernels.game_stream(np.uint64(7), s, e) for s, e in zip(slots, episodes)]
print(batch_kernels.__file__.startswith({root!r}), [int(x) for x in got] == [int(x) for x in want], int(got[0]))
"""


@pytest.mark.slow
def test_a_cached_caller_follows_a_change_to_a_callee_in_another_file(tmp_path):
    # A copy of the package, its numba cache in its own __pycache__ folders: compile and cache, change the
    # callee's file, run again. numba's own stamp would load the caller's old code (the last figure unchanged).
    copy = _copy_package(tmp_path / "site")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(tmp_path / "site")
    child = _CHILD.format(root=str(copy))

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", child], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    first = run()
    assert first[:2] == ["True", "True"]
    assert any(p.suffix == ".nbi" for p in (copy / "core" / "__pycache__").iterdir())  # it did cache
    kernels = copy / "core" / "batch_kernels.py"
    text = kernels.read_text(encoding="utf-8")
    old = "    return mix64(z ^ (np.uint64(episode) * _M2 + np.uint64(2)))"
    assert text.count(old) == 1
    kernels.write_text(text.replace(old, old.replace("np.uint64(2)", "np.uint64(3)")), encoding="utf-8")
    second = run()
    assert second[:2] == ["True", "True"]  # the caller runs the callee's new code
    assert second[2] != first[2]
