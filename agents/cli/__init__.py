"""The commands: `train` (`quiddler-train`, `python train.py`), `evaluate` (`quiddler-evaluate`,
`python evaluate.py`) and `play` (`quiddler-play`, `python examples/play_human.py`), each a `main(argv)`."""
