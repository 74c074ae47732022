"""Where the batched engine's time goes: a sampling profile of its compiled kernels, by function.

    python benchmarks/profile_engine.py [--games 1024] [--seconds 4] [--top 15]

Plays random games with every seat a compiled random bot (`bench_vector.measure_engine`, its
"engine alone" row) while Linux `perf` samples the process, then attributes
each sample to the compiled function it fell in. numba's code has no symbols perf can read, so
the script compiles the kernels afresh (into a temporary numba cache) and asks numba where each
compiled function starts. A sample in `NRT_incref` / `NRT_decref` (numba's reference counts of
arrays: an atomic add, a function call each) is also charged to the function that called it,
read from the return address on top of the sampled stack (both are leaves without a frame).

Needs `perf` (the linux-perf package) allowed to sample this process (root, or
kernel.perf_event_paranoid <= 1 for a user). Prints shares of the samples; asserts nothing.
"""

from __future__ import annotations

import argparse
import atexit
import bisect
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# A fresh numba cache: code loaded from a cache cannot tell where its functions start.
os.environ["NUMBA_CACHE_DIR"] = _CACHE = tempfile.mkdtemp(prefix="quiddler-profile-numba-")
atexit.register(shutil.rmtree, _CACHE, True)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bench_vector import measure_engine  # noqa: E402  (the same play as its "engine alone" row)

from quiddler_env.core import batch_bots, batch_kernels, solver_kernel  # noqa: E402
from quiddler_env.core.batch import BatchGame  # noqa: E402

REFCOUNTS = ("NRT_incref", "NRT_decref")
OUTSIDE = "(outside the compiled code: the allocator, the C library, Python)"
_SAMPLE = re.compile(r"PERF_RECORD_SAMPLE\([^)]*\): \d+/\d+: (0x[0-9a-f]+)")
_USTACK = re.compile(r"ustack: size (\d+), offset (0x[0-9a-f]+)")
_HEX = re.compile(r"\.\s+[0-9a-f]{4}:\s+((?:[0-9a-f]{2} ?)+)")


def function_starts() -> tuple[list[int], list[str]]:
    """Start address and short name (module.function) of every compiled function of the engine's modules."""
    found: dict[int, str] = {}
    for module in (batch_bots, batch_kernels, solver_kernel):
        for name in dir(module):
            dispatcher = getattr(module, name)
            for result in getattr(dispatcher, "overloads", {}).values():
                library = result.library
                for fn in library._final_module.functions:  # each caller's library holds its own callees' copies
                    if fn.is_declaration:
                        continue
                    address = library.get_pointer_to_function(fn.name)
                    if address:
                        found[address] = short_name(fn.name)
    starts = sorted(found)
    return starts, [found[a] for a in starts]


def short_name(mangled: str) -> str:
    """`solver_kernel.hand_words` from numba's mangled `_ZN12quiddler_env4core13solver_kernel10hand_wordsB3v29...`."""
    at = mangled.find("_ZN")
    if at < 0:
        return mangled  # NRT_incref, NRT_decref and other helpers keep their names
    rest, parts = mangled[at + 3 :], []
    while (m := re.match(r"\d+", rest)) is not None:
        size = int(m.group())
        parts.append(rest[m.end() : m.end() + size])
        rest = rest[m.end() + size :]
    return ".".join(parts[-2:]) or mangled


def samples(dump: str):
    """(sampled address, the first word of the sampled stack or None) of each sample in `perf report -D`."""
    for block in dump.split("raw event: size ")[1:]:
        head = _SAMPLE.search(block)
        if head is None:
            continue
        ip = int(head.group(1), 16)
        raw: list[int] = []
        for line in block.splitlines()[1:]:
            m = _HEX.match(line)
            if m is None:
                if raw:
                    break
                continue
            raw += [int(x, 16) for x in m.group(1).split()]
        stack = _USTACK.search(block)
        word = None
        if stack and int(stack.group(1)) >= 8:
            at = int(stack.group(2), 16) + 8  # the stack data follows its u64 size
            word = int.from_bytes(bytes(raw[at : at + 8]), "little") if len(raw) >= at + 8 else None
        yield ip, word


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--top", type=int, default=15)
    args = p.parse_args(argv)
    perf = shutil.which("perf")
    if perf is None:
        print("profile_engine: needs Linux perf on the PATH (apt-get install linux-perf)", file=sys.stderr)
        return 2
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, as bench_vector
    games = BatchGame(num_games=args.games)
    t = time.perf_counter()
    measure_engine(games, 0.5, 0)  # compiles the kernels (fresh cache: a minute or two)
    compile_s = time.perf_counter() - t
    starts, names = function_starts()

    def where(address: int | None) -> str:
        i = bisect.bisect_right(starts, address) - 1 if address else -1
        # A function's code is at most a few hundred kB past its start; farther is someone else's.
        return names[i] if i >= 0 and address - starts[i] < 1 << 20 else OUTSIDE

    with tempfile.TemporaryDirectory(prefix="quiddler-profile-") as tmp:
        data = os.path.join(tmp, "perf.data")
        recorder = subprocess.Popen(
            [perf, "record", "-q", "-e", "cpu-clock", "-F", "999", "--call-graph=dwarf,16", "-p", str(os.getpid()),
             "-o", data, "--", "sleep", str(args.seconds)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(0.5)  # perf attaches
        rate = measure_engine(games, args.seconds + 1.0, 1)
        _, err = recorder.communicate()
        if recorder.returncode != 0 or not os.path.exists(data):
            print(f"profile_engine: perf record failed: {err.strip().splitlines()[-1:]}", file=sys.stderr)
            return 2
        dump = subprocess.run([perf, "report", "-D", "-i", data], capture_output=True, text=True).stdout

    own = collections.Counter()
    callers = collections.Counter()
    total = 0
    for ip, word in samples(dump):
        total += 1
        name = where(ip)
        own[name] += 1
        if name in REFCOUNTS:
            callers[where(word)] += 1
    if total == 0:
        print("profile_engine: perf recorded no samples of this process", file=sys.stderr)
        return 2
    print(
        f"{args.games} games of random play, every seat a compiled bot: {rate:,.0f} learner steps/s under perf; "
        f"{total:,} samples over {args.seconds:g} s (compiling took {compile_s:.0f} s)"
    )
    print(f"\n{'share':>6}  samples in (the function sampled)")
    for name, count in own.most_common(args.top):
        print(f"{count / total:>6.1%}  {name}")
    refcounts = sum(own[n] for n in REFCOUNTS)
    print(f"\n{refcounts / total:>6.1%}  in numba's reference counts ({' / '.join(REFCOUNTS)}), by caller:")
    for name, count in callers.most_common(args.top):
        print(f"{count / total:>6.1%}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
