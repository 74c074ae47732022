"""Play Quiddler at the terminal against bots or a trained policy: `python examples/play_human.py --opponents expert`.

The command itself is `quiddler_agents.cli.play` (the repository's `agents/` folder, installed under that name;
also the `quiddler-play` console script); `--help` tells all.
"""

import sys

from quiddler_agents.cli.play import main

if __name__ == "__main__":
    sys.exit(main())
