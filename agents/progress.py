"""Progress on stderr for a command's long phases (compiling the kernels, imitation, training, evaluation).

On a terminal, with tqdm installed (the eval extra), a phase is a bar; elsewhere (a log file, CI, a pipe) it
is lines: the caller's line when the phase starts, one each time another tenth of it is done (at least
`MIN_GAP` seconds after the last, and at least every `MAX_GAP` seconds), and the caller's line when it ends.
Lines are written with `write`, which keeps a bar on the terminal below them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

MIN_GAP = 5.0
MAX_GAP = 60.0


def tqdm_class() -> Any:
    """tqdm's bar class, or None where tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


def write(line: str) -> None:
    """One line on stderr, above any progress bar on the terminal."""
    tqdm = tqdm_class()
    if tqdm is not None:
        tqdm.write(line, file=sys.stderr)
        sys.stderr.flush()
    else:
        print(line, file=sys.stderr, flush=True)


class Progress:
    """The progress of one phase: `update(n)` as it goes, `close()` at its end (returns its seconds).

    `say` writes a progress line (lines mode); `bar`: a tqdm bar instead, where tqdm is installed;
    `enabled=False`: nothing shown (--quiet), the seconds still counted.
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str,
        say: Callable[[str], None] = write,
        *,
        bar: bool = False,
        enabled: bool = True,
        initial: int = 0,
        desc: str | None = None,
        **bar_options: Any,
    ) -> None:
        self.label = label
        self.total = max(int(total), 1)
        self.unit = unit
        self.say = say
        self.initial = self.done = int(initial)
        self.start = self.last = time.perf_counter()
        self._tenth = self._tenths(self.done)
        self._bar = None
        self.enabled = enabled
        tqdm = tqdm_class() if enabled and bar else None
        if tqdm is not None:
            self._bar = tqdm(
                total=int(total),
                initial=int(initial),
                unit=unit,
                desc=desc or label,
                file=sys.stderr,
                dynamic_ncols=True,
                **bar_options,
            )

    def _tenths(self, done: int) -> int:
        return min(10, 10 * done // self.total)

    def update(self, n: int = 1) -> None:
        self.done += int(n)
        if self._bar is not None:
            self._bar.update(n)
            return
        if not self.enabled:
            return
        now = time.perf_counter()
        tenth = self._tenths(self.done)
        if (tenth > self._tenth and now - self.last >= MIN_GAP) or now - self.last >= MAX_GAP:
            self._tenth = tenth
            self.last = now
            self.say(f"{self.label}: {self.done}/{self.total} {self.unit}s ({now - self.start:.0f} s)")

    def postfix(self, text: str) -> None:
        """A note on the bar (nothing in lines mode)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=True)

    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def close(self) -> float:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        return self.seconds()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
