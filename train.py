"""Train a Quiddler agent from a YAML run config: `python train.py --config configs/quickstart.yaml`.

The command itself is `quiddler_agents.cli.train` (installed: the `quiddler-train` console script); `--help` tells all.
"""

from quiddler_agents.cli import exit_with
from quiddler_agents.cli.train import main

if __name__ == "__main__":
    exit_with(main)
