"""Train a Quiddler agent from a YAML run config: `python train.py --config configs/quickstart.yaml`.

The command itself is `agents.cli.train` (installed: the `quiddler-train` console script); `--help` tells all.
"""

from agents.cli import exit_with
from agents.cli.train import main

if __name__ == "__main__":
    exit_with(main)
