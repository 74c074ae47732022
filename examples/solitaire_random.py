"""Play Quiddler solitaire (`QuiddlerSolitaire-v0`) with a random or a greedy legal policy.

    python examples/solitaire_random.py --episodes 100 --seed 0 --policy greedy

`random` picks uniformly among the legal actions; `greedy` lays the word worth the
most points (restarting a pile only when no word is left). Prints the mean score,
the win rate and the mean episode length; `--render` shows the first episode.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import quiddler_env  # noqa: F401  (registers the Gymnasium ids)


def greedy_action(env: gym.Env, legal: np.ndarray) -> int:
    """The legal word with the most points (ties: lowest id); a restart when no word is legal."""
    game = env.unwrapped.game
    words = {m - 1: game.dictionary.term_points[term] for m, term in game.word_moves()}
    return max(legal, key=lambda a: (words.get(int(a), -1), -a))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", choices=("random", "greedy"), default="random")
    parser.add_argument("--render", action="store_true", help="print the first episode move by move")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, got {args.episodes}")

    env = gym.make("QuiddlerSolitaire-v0", render_mode="ansi")
    rng = np.random.default_rng(args.seed)  # the policy's own generator; the deals come from reset(seed)
    scores, wins, lengths = [], 0, []
    for episode in range(args.episodes):
        _, info = env.reset(seed=args.seed + episode)
        total, done = 0.0, False
        while not done:
            if args.render and episode == 0:
                print(env.render(), end="\n\n")
            legal = np.flatnonzero(info["action_mask"])
            action = int(rng.choice(legal)) if args.policy == "random" else greedy_action(env, legal)
            _, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        if args.render and episode == 0:
            print(env.render(), end="\n\n")
        scores.append(total)
        wins += bool(info["won"])
        lengths.append(info["moves"])
    env.close()
    summary = {
        "episodes": args.episodes,
        "mean_score": float(np.mean(scores)),
        "win_rate": wins / args.episodes,
        "mean_moves": float(np.mean(lengths)),
    }
    print(
        f"policy={args.policy} episodes={args.episodes} mean_score={summary['mean_score']:.1f} "
        f"win_rate={summary['win_rate']:.3f} mean_moves={summary['mean_moves']:.1f}"
    )
    return summary


if __name__ == "__main__":
    main()
