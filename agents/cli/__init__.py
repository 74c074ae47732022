"""The commands: `train` (`quiddler-train`, `python train.py`), `evaluate` (`quiddler-evaluate`,
`python evaluate.py`) and `play` (`quiddler-play`, `python examples/play_human.py`), each a `main(argv)`."""

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

# What a shell reports for a command ended by a signal: 128 + its number (SIGINT 2, SIGPIPE 13, SIGTERM 15).
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
EXIT_TERMINATED = 143

COMMANDS = {
    "train": ("quiddler-train", "train.py"),
    "evaluate": ("quiddler-evaluate", "evaluate.py"),
    "play": ("quiddler-play", "play.py"),
}
"""Each command's console script (the installed package) and its script in a checkout."""


def program(command: str) -> str:
    """The name `command` ("train", "evaluate" or "play") goes by in its messages: the name this process was
    started as (`os.path.basename(sys.argv[0])`) when that is the command's own, its console script
    (`quiddler-train`) or its script (`train.py`, also `python -m quiddler_agents.cli.train`); else (a program
    that calls `main()` itself, the tests) the script's name."""
    script, file = COMMANDS[command]
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    invoked = invoked.removesuffix(".exe")
    return invoked if invoked in (script, file) else file


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised as an exception by `stop_signals`. A KeyboardInterrupt, so that everything Ctrl-C
    cleans up on its way out (staged writes, worker pools, folder locks) is cleaned up for it too."""


def _raise_terminated(signum: int, frame: object) -> None:
    # A second SIGTERM while the first one is being cleaned up ends the process at once, as SIGTERM does.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Terminated()


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block SIGTERM raises `Terminated`, as SIGINT raises KeyboardInterrupt: a command ends both
    the same way, with one line and `interrupted_status` (only in the main thread, where signals arrive)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        if previous is not None:  # None: a handler set outside Python, which cannot be put back
            signal.signal(signal.SIGTERM, previous)


def interrupted_status(exc: KeyboardInterrupt) -> int:
    """The exit status of a command stopped by `exc`: 143 for SIGTERM, 130 for SIGINT (Ctrl-C)."""
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def exit_with(main: Callable[[], int]) -> None:
    """Run a command's `main()` and exit with its status; a reader that stops early (`| head`, `| grep -q`)
    ends the command quietly with status 141 instead of a BrokenPipeError traceback."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's documented idiom: point stdout at devnull so that the interpreter's last flush at exit
        # does not raise the same error again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = EXIT_BROKEN_PIPE
    sys.exit(status)
