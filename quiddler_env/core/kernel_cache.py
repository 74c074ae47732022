"""numba's on-disk cache of the package's compiled kernels, kept in step with all of their sources.

numba stamps a cached function with its own source file only, but the machine code it stores also
holds a copy of every function it calls, from whatever file. So after a change to one kernel module,
the cached callers in the other modules go on running the old code: measured in 0.8.9's work, the
engine's kernels in `batch_kernels` kept 0.8.8's laying front after `solver_kernel.py` changed, with
no error. An editable install (the README's) meets this at the first `git pull` that touches one of
them. This module puts a cache locator ahead of numba's own: for a kernel module of this package (a
file that asks numba to cache), the same cache place numba would choose, with a stamp that adds the
digest of every kernel module's source (`kernel_sources_digest`), so that a change to any of them
recompiles them all. `quiddler_env.core` imports it first, before any kernel module defines a kernel.
"""

from __future__ import annotations

import hashlib
import warnings
from functools import lru_cache
from pathlib import Path

from numba.core import caching

PACKAGE_DIR = Path(__file__).resolve().parents[1]
CACHED_MARK = b"cache=True"
"""What makes a file of the package a kernel module: it asks numba to cache what it compiles."""
_THIS = Path(__file__).resolve().relative_to(PACKAGE_DIR)  # names the mark, asks for nothing


def _read_kernel_sources(package_dir: Path) -> list[tuple[Path, bytes]]:
    """Each kernel module of the package at package_dir, sorted, with its bytes (each file read once)."""
    found = []
    for path in sorted(package_dir.rglob("*.py")):
        source = path.read_bytes()
        if CACHED_MARK in source and path.relative_to(package_dir) != _THIS:
            found.append((path, source))
    return found


def _digest(package_dir: Path, sources: list[tuple[Path, bytes]]) -> str:
    digest = hashlib.sha256()
    for path, source in sources:
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
        digest.update(source + b"\0")
    return digest.hexdigest()


def kernel_sources(package_dir: Path = PACKAGE_DIR) -> tuple[Path, ...]:
    """The package's kernel modules: its Python files that ask numba to cache, sorted."""
    return tuple(path for path, _ in _read_kernel_sources(package_dir))


def kernel_sources_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """One digest of every kernel module's path (inside the package) and bytes."""
    return _digest(package_dir, _read_kernel_sources(package_dir))


@lru_cache(maxsize=1)
def _package_state() -> tuple[frozenset[str], str]:
    # Read once a process: the kernel modules do not change under a running process that uses them.
    sources = _read_kernel_sources(PACKAGE_DIR)
    return frozenset(str(path) for path, _ in sources), _digest(PACKAGE_DIR, sources)


class KernelCacheLocator(caching._CacheLocator):
    """numba's own locator for a kernel of this package (the first of its classes that takes the function),
    its source stamp extended with `kernel_sources_digest`."""

    def __init__(self, inner: caching._CacheLocator):
        self._inner = inner

    def ensure_cache_path(self) -> None:
        self._inner.ensure_cache_path()

    def get_cache_path(self) -> str:
        return self._inner.get_cache_path()

    def get_disambiguator(self) -> str:
        return self._inner.get_disambiguator()

    def get_source_stamp(self):
        return (self._inner.get_source_stamp(), _package_state()[1])

    @classmethod
    def from_function(cls, py_func, py_file):
        if str(Path(py_file).resolve()) not in _package_state()[0]:
            return None
        for numba_locator in _NUMBA_LOCATORS:
            inner = numba_locator.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner)
        return None


def _register() -> list:
    """Put `KernelCacheLocator` first in numba's locator list; numba's own classes, as they were."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):  # pragma: no cover - only on a numba that reorganised its cache
        warnings.warn(
            "quiddler_env: this numba's cache has no locator list; after a change to one kernel module, "
            "delete the package's numba cache (__pycache__/*.nbi, *.nbc) before use",
            RuntimeWarning,
            stacklevel=2,
        )
        return []
    numba_own = [c for c in classes if c is not KernelCacheLocator]
    if KernelCacheLocator not in classes:
        classes.insert(0, KernelCacheLocator)
    return numba_own


_NUMBA_LOCATORS = _register()
