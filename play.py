"""Play Quiddler: the browser table (`python play.py`, then open the address it prints) or `--terminal`.

The command itself is `quiddler_agents.cli.play` (installed: the `quiddler-play` console script); `--help` tells all.
"""

import sys

from quiddler_agents.cli.play import main

if __name__ == "__main__":
    sys.exit(main())
