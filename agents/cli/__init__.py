"""The commands: `train` (`quiddler-train`, `python train.py`), `evaluate` (`quiddler-evaluate`,
`python evaluate.py`) and `play` (`quiddler-play`, `python examples/play_human.py`), each a `main(argv)`."""

import os
import sys
from collections.abc import Callable

# What a shell reports for a command ended by SIGPIPE (128 + 13), as `seq 100000 | head -1` does.
EXIT_BROKEN_PIPE = 141


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
