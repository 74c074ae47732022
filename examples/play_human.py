"""Play Quiddler at the terminal against bots or a trained policy: `python examples/play_human.py --opponents expert`.

The terminal seat of `quiddler_agents.cli.play` (the repository's `agents/` folder, installed under that name), as
`quiddler-play --terminal`; without `--terminal` that command serves the browser table. `--help` tells all.
"""

import sys

from quiddler_agents.cli.play import main

if __name__ == "__main__":
    sys.exit(main(["--terminal", *sys.argv[1:]]))
