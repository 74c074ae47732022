"""The `rllib` backend: multi-agent PPO on Ray RLlib (new API stack), self-play or against bots, local or a cluster.

| module | holds | imports Ray |
|---|---|---|
| `config` | the `ray` and `rllib` sections, the checks and the translation of a run config to RLlib (`RLlibPlan`) | no |
| `env` | `QuiddlerMultiAgentEnv`: the AEC env as an RLlib `MultiAgentEnv`, bot seats played inside | yes |
| `module` | `MaskedPPOTorchRLModule`: RLlib's PPO module behind the action mask | yes |
| `trainer` | `make_trainer(session)`: the run layer's `Trainer` (Ray, the algorithm, checkpoints, exports) | yes |

The run folder, checkpoints, resume, evaluation and the best model are the run layer's
(`quiddler_agents.training.run`). Needs the extra: `pip install -e .[rllib]` (its own virtual env:
RLlib 2.60 wants gymnasium 1.2.x). This package's `__init__` and `config` import no Ray,
so a config with `backend: rllib` validates without it.
"""
