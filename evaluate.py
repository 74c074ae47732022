"""Tournaments between policies and bots: `python evaluate.py --players expert greedy --games 1000`.

The command itself is `quiddler_agents.cli.evaluate` (installed: the `quiddler-evaluate` console script); `--help` tells all.
"""

from quiddler_agents.cli import exit_with
from quiddler_agents.cli.evaluate import main

if __name__ == "__main__":
    exit_with(main)
