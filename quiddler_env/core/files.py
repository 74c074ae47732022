"""Files written whole: the one atomic writer, the one folder swap, the one YAML reader of the project.

Everything the project writes (results, checkpoints, policy bundles, the dictionary
cache, run folders) goes through here, so a kill at any moment leaves either the old
file or folder or the complete new one, never a mix:

- `write_atomic(path, data)` writes a file through a temporary file in the same folder,
  fsynced, then `os.replace`d into place (`write_json` for JSON).
- `staged_folder(final)` is a context manager yielding an empty temporary folder beside
  `final`; when the block ends without an error the folder replaces `final` as a whole
  (`replace_folder`), else it is deleted.
- `replace_folder(tmp, final)` swaps two folders atomically where the kernel can
  (Linux `renameat2(RENAME_EXCHANGE)`); elsewhere it moves the old folder aside first and
  `recover_folder` puts it back if a kill came between the two renames.
- `remove_stale_temporaries(folder)` deletes what killed writes left (the names all match
  `.NAME.*.tmp` / `.NAME.*.old`); call it where a process starts to own a folder.
- `FolderLock(folder)`: an exclusive `flock` on a hidden file beside a folder, so two
  processes never write one folder; the kernel drops it when the holder dies (kill -9 too).
- `read_yaml_mapping(path)` reads a YAML mapping with `safe_load`; `open_regular(path)`
  opens only a regular file (a FIFO or a device at a cache path would block or mislead).
- `read_json(path)` / `loads_json(text)`: JSON, where nesting too deep for the parser is
  a `json.JSONDecodeError` like any other bad JSON (not a `RecursionError`).

Every error is an `OSError` or `ValueError` whose message names the path.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

_UMASK = os.umask(0)
os.umask(_UMASK)
FILE_MODE = 0o666 & ~_UMASK
"""What `open()` would give a new file: temporaries are private (0600) until they are moved into place."""
FOLDER_MODE = 0o777 & ~_UMASK

TMP_SUFFIX = ".tmp"
OLD_SUFFIX = ".old"
LOCK_SUFFIX = ".lock"


# -- files --------------------------------------------------------------------------------------------


def write_atomic(path: str | os.PathLike, data: bytes | str | Callable[[IO[bytes]], Any]) -> Path:
    """Write `data` (bytes, text, or a function writing to a binary file object) to `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode() if isinstance(data, str) else data)
            fh.flush()
            os.fchmod(fh.fileno(), FILE_MODE)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and naming(exc, path) is not exc:
            raise naming(exc, path) from exc
        raise
    return path


def naming(exc: OSError, path: str | os.PathLike, staged: str | os.PathLike | None = None) -> OSError:
    """`exc`, or the same error naming `path` where it names no file: a failed `write()` or `fsync()` (a full
    disk) names none, and "No space left on device" alone does not say where. `staged`: the temporary folder
    being written as `path`; a file in it is named as the file it was to become in `path`."""
    if exc.errno is None:
        return exc
    name = exc.filename
    if name is None:
        name = str(path)
    elif staged is not None and isinstance(name, str) and Path(name).is_relative_to(staged):
        name = str(Path(path) / Path(name).relative_to(staged))
    else:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), name)  # OSError(errno, ...) picks the subclass


def write_json(path: str | os.PathLike, data: Any) -> Path:
    """`data` as indented, key-sorted JSON, written atomically."""
    return write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def sha256_file(path: str | os.PathLike) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open_regular(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_regular(path: str | os.PathLike) -> IO[bytes]:
    """Open `path` for binary reading only if it is a regular file (never blocks on a FIFO)."""
    path = Path(path)
    # O_NONBLOCK: opening a FIFO with no writer would otherwise hang before fstat could refuse it.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        if hasattr(os, "O_NONBLOCK"):
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text(path: str | os.PathLike) -> str:
    """A regular file's text (UTF-8)."""
    with open_regular(path) as fh:
        return fh.read().decode("utf-8")


# -- JSON -----------------------------------------------------------------------------------------------


class JSONNestingError(json.JSONDecodeError):
    """JSON whose arrays and objects nest deeper than Python's parser can follow (it raises RecursionError)."""

    def __init__(self, doc: str | bytes) -> None:
        super().__init__("nested too deeply", doc if isinstance(doc, str) else "", 0)
        self.args = ("its arrays and objects nest too deeply to read",)  # no line and column: there is no one place


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, with JSON nested too deeply for the parser a `json.JSONDecodeError` (`JSONNestingError`) like
    any other invalid JSON, not a `RecursionError`: so every reader's bad-JSON message covers it."""
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONNestingError(text) from None


def read_json(path: str | os.PathLike) -> Any:
    """A regular file's JSON (`loads_json`: a `ValueError` for bad JSON, nesting too deep included)."""
    return loads_json(read_text(path))


# -- folders ------------------------------------------------------------------------------------------


def _renameat2_exchange() -> Callable[[str, str], bool] | None:
    """`renameat2(..., RENAME_EXCHANGE)` from libc, or None where the platform has none."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2

    def exchange(a: str, b: str) -> bool:
        if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
            return True
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # kernel or filesystem without it
            return False
        raise OSError(err, os.strerror(err), b)

    return exchange


_EXCHANGE = _renameat2_exchange() if os.name == "posix" else None


def _aside(final: Path) -> Path:
    return final.parent / f".{final.name}{OLD_SUFFIX}"


def replace_folder(tmp: str | os.PathLike, final: str | os.PathLike) -> Path:
    """Put the complete folder `tmp` at `final`, replacing any folder there as a whole."""
    tmp, final = Path(tmp), Path(final)
    _fsync_dir(tmp)
    if final.exists() and _EXCHANGE is not None and _EXCHANGE(str(tmp), str(final)):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old folder
    else:
        old = _aside(final)
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            os.replace(final, old)  # a kill here leaves only `old`: recover_folder puts it back
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    _fsync_dir(final.parent)
    return final


def recover_folder(final: str | os.PathLike) -> None:
    """Undo a folder swap that a kill interrupted between its two renames (the old folder comes back)."""
    final = Path(final)
    old = _aside(final)
    if old.is_dir():
        if final.exists():
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(old, final)


@contextlib.contextmanager
def staged_folder(final: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside `final`; on success it replaces `final` whole, on error it goes."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    recover_folder(final)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=TMP_SUFFIX, dir=final.parent))
    try:
        os.chmod(tmp, FOLDER_MODE)
        yield tmp
        replace_folder(tmp, final)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and naming(exc, final, staged=tmp) is not exc:
            raise naming(exc, final, staged=tmp) from exc
        raise


def is_temporary(name: str) -> bool:
    """Whether a file or folder name is one of this module's temporaries (`.NAME.*.tmp`, `.NAME.old`)."""
    return name.startswith(".") and (name.endswith(TMP_SUFFIX) or name.endswith(OLD_SUFFIX))


def remove_stale_temporaries(folder: str | os.PathLike, recursive: bool = True) -> list[Path]:
    """Delete the temporaries killed writes left in `folder` (after `recover_folder` on each swap); returns them.

    Only for a folder this process owns (e.g. under its `FolderLock`): a live writer's
    temporaries look the same.
    """
    folder = Path(folder)
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for entry in sorted(folder.iterdir()):
        if entry.name.endswith(OLD_SUFFIX) and entry.name.startswith("."):
            recover_folder(entry.parent / entry.name[1 : -len(OLD_SUFFIX)])
        if is_temporary(entry.name) and (entry.exists() or entry.is_symlink()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry)
        elif recursive and entry.is_dir() and not entry.is_symlink():
            removed += remove_stale_temporaries(entry, recursive=True)
    return removed


def check_writable_folder(folder: str | os.PathLike, what: str = "output folder") -> Path:
    """`folder` is, or can be made, a writable folder: tried by making (and removing) a temporary folder in it
    or in its nearest existing ancestor, so nothing is left behind either way."""
    if str(folder).strip() == "":  # before Path(), which reads "" as "."
        raise ValueError(f"{what} is empty; name a folder")
    folder = Path(folder)
    probe = folder
    while not probe.exists() and not probe.is_symlink():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise ValueError(f"{what} {folder}: {probe} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".probe.", suffix=TMP_SUFFIX, dir=probe))
    except OSError as exc:
        raise ValueError(f"{what} {folder}: {probe} is not writable ({exc.strerror or exc})") from None
    return folder


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class FolderBusyError(OSError):
    """Another live process holds the lock of a folder."""


class FolderLock:
    """An exclusive lock on a folder, held through a hidden `.NAME.lock` file beside it (holding the holder's pid).

    `flock` locks die with their process, so a killed holder never blocks the next run.
    `release` removes the lock file while still holding the lock; `acquire` so checks that
    the file it locked is still the one at the path (else it locked a removed file, and
    tries again). Only a killed holder leaves its file behind, for the next holder to remove.
    """

    def __init__(self, folder: str | os.PathLike, what: str = "folder") -> None:
        self.folder = Path(folder)
        self.what = what
        self.path = self.folder.parent / f".{self.folder.name}{LOCK_SUFFIX}"
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
                os.close(fd)
                raise FolderBusyError(
                    errno.EBUSY, f"{self.what} {self.folder} is being written by another process (pid {holder})"
                ) from None
            except BaseException:
                os.close(fd)
                raise
            if self._is_at_path(fd):
                break
            os.close(fd)  # a holder removed this file as it released it: lock the one at the path now
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except BaseException:
            self._fd = fd
            self.release()
            raise
        self._fd = fd
        return self

    def _is_at_path(self, fd: int) -> bool:
        """Whether the open lock file `fd` is still the file at `self.path`."""
        try:
            at_path = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (held.st_dev, held.st_ino) == (at_path.st_dev, at_path.st_ino)

    def release(self) -> None:
        if self._fd is not None:
            # Removed while still locked, so no process can lock this file and believe it holds the folder.
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


# -- YAML -----------------------------------------------------------------------------------------------


def read_yaml_mapping(path: str | os.PathLike, what: str = "config file", allow_empty: bool = True) -> dict[str, Any]:
    """A YAML file holding a mapping, read with `safe_load`; a `ValueError` naming the file otherwise.

    An empty file is `{}` when `allow_empty`, else an error.
    """
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(read_text(path))
    except FileNotFoundError:
        raise ValueError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {what} {path}: {exc}") from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{what} {path} is not valid YAML: {first}") from None
    except RecursionError:  # the composer recurses once per level of nesting
        raise ValueError(f"{what} {path} is not valid YAML: it nests too deeply to read") from None
    if data is None:
        if not allow_empty:
            raise ValueError(f"{what} {path} is empty; it must hold a mapping of keys")
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{what} {path} must hold a mapping of keys, got {type(data).__name__}")
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ValueError(f"{what} {path}: key {bad[0]!r} is not a string")
    return data
