"""quiddler_env.core.files: whole files, whole folders, locks, regular files only, YAML mappings; kill -9 included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from quiddler_env.core import files

ROOT = Path(__file__).resolve().parent.parent


def test_write_atomic_replaces_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "x.json"
    files.write_json(target, {"b": 1, "a": [1, 2]})
    assert json.loads(target.read_text()) == {"a": [1, 2], "b": 1}
    files.write_atomic(target, b"bytes")
    assert target.read_bytes() == b"bytes"
    files.write_atomic(target, lambda fh: fh.write(b"from a writer"))
    assert target.read_text() == "from a writer"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]
    assert target.stat().st_mode & 0o777 == files.FILE_MODE  # not the temporary's private 0600

    def fails(fh):
        fh.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        files.write_atomic(target, fails)
    assert target.read_text() == "from a writer"  # the old file stays whole
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_staged_folder_replaces_a_folder_whole(tmp_path):
    final = tmp_path / "out"
    with files.staged_folder(final) as staged:
        (staged / "a.txt").write_text("1")
        (staged / "stale.txt").write_text("old run")
    with files.staged_folder(final) as staged:
        (staged / "a.txt").write_text("2")
    assert sorted(p.name for p in final.iterdir()) == ["a.txt"]  # nothing of the first run survives
    assert (final / "a.txt").read_text() == "2"
    with pytest.raises(ValueError, match="boom"), files.staged_folder(final) as staged:
        (staged / "a.txt").write_text("3")
        raise ValueError("boom")
    assert (final / "a.txt").read_text() == "2"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_an_interrupted_two_step_swap_is_recovered(tmp_path):
    """Where the kernel has no atomic exchange, a kill between the two renames leaves only `.NAME.old`."""
    final = tmp_path / "bundle"
    aside = tmp_path / ".bundle.old"
    aside.mkdir()
    (aside / "policy.json").write_text("{}")
    files.recover_folder(final)
    assert (final / "policy.json").is_file() and not aside.exists()
    aside.mkdir()  # both present: the swap had finished, the old copy is garbage
    files.recover_folder(final)
    assert final.is_dir() and not aside.exists()


def test_remove_stale_temporaries(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    (tmp_path / ".keep.txt.abc.tmp").write_text("half")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".step_1.xyz.tmp").mkdir()
    (tmp_path / "sub" / ".best.old").mkdir()  # an interrupted swap: comes back as best/
    removed = files.remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in removed) == [".keep.txt.abc.tmp", ".step_1.xyz.tmp"]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["best", "keep.txt", "sub"]


_WRITER = """
import sys
from quiddler_env.core import files
final, n = sys.argv[1], 0
print("writing", flush=True)
while True:
    n += 1
    with files.staged_folder(final) as staged:
        for i in range(20):
            (staged / f"part{i}.txt").write_text(str(n) * 2000)
"""


@pytest.mark.slow
def test_kill_9_during_folder_writes_leaves_one_whole_folder(tmp_path):
    rng = np.random.default_rng(7)
    final = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    written = False
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(final)], env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "writing\n"  # imported (slow on a busy machine) and at its first write
        time.sleep(0.05 + float(rng.uniform(0, 0.4)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        files.remove_stale_temporaries(tmp_path)
        if not final.exists():
            assert not written, "a whole folder was lost"
            assert [p.name for p in tmp_path.iterdir()] == []
            continue
        written = True
        parts = sorted(final.iterdir())
        assert len(parts) == 20
        assert len({p.read_text() for p in parts}) == 1  # every file from the same write
        assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert written


@pytest.mark.slow
def test_folder_lock_is_exclusive_and_dies_with_its_holder(tmp_path):
    folder = tmp_path / "run"
    busy = f"run folder {folder} is being written by another process"
    with files.FolderLock(folder, "run folder"), pytest.raises(files.FolderBusyError, match=busy):
        files.FolderLock(folder, "run folder").acquire()
    files.FolderLock(folder).acquire().release()  # free again once released
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from quiddler_env.core import files; files.FolderLock({str(folder)!r}).acquire(); "
            "print('held', flush=True); import time; time.sleep(60)",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(files.FolderBusyError, match=str(holder.pid)):
            files.FolderLock(folder).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    files.FolderLock(folder).acquire().release()  # kill -9 dropped it


def test_special_files_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "cache.npz"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: outcome.append(pytest.raises(OSError, files.read_text, fifo).value))
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "opening a FIFO blocked"
    assert "not a regular file" in str(outcome[0])
    with pytest.raises(ValueError, match="not a regular file"):
        files.read_yaml_mapping(fifo)


def test_read_yaml_mapping(tmp_path):
    good = tmp_path / "a.yaml"
    good.write_text("x: 1\ny: [1, 2]\n")
    assert files.read_yaml_mapping(good) == {"x": 1, "y": [1, 2]}
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    assert files.read_yaml_mapping(empty) == {}
    with pytest.raises(ValueError, match=f"config file {empty} is empty"):
        files.read_yaml_mapping(empty, allow_empty=False)
    for text, message in (("- 1\n", "must hold a mapping"), ("a: [1\n", "not valid YAML"), ("1: x\n", "not a string")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(ValueError, match=message):
            files.read_yaml_mapping(bad)
    with pytest.raises(ValueError, match="does not exist"):
        files.read_yaml_mapping(tmp_path / "missing.yaml")
    bad.write_text("!!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(ValueError, match="not valid YAML"):  # safe_load: no code from a config file
        files.read_yaml_mapping(bad)


def test_check_writable_folder(tmp_path):
    assert files.check_writable_folder(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists()  # the check leaves nothing behind
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        files.check_writable_folder(tmp_path / "file" / "run", "run folder")
    with pytest.raises(ValueError, match="is empty"):
        files.check_writable_folder("")
    with pytest.raises(ValueError, match="not writable"):
        files.check_writable_folder("/proc/quiddler-run")  # even root cannot make folders there
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
