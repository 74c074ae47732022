"""The `sb3` backend: MaskablePPO (sb3-contrib) on `Quiddler-v0`, bot opponents, a self-play league, imitation.

`config` holds what the backend adds to a run config (no SB3 import); `trainer` the
training itself; `opponents`, `league` and `pretrain` the training env's opponent
mixture, the pool of frozen learner copies and the imitation warm start.
"""
