"""The shape of the engine's code: per module, its lines, its longest function and its largest parameter count.

    python benchmarks/code_shape.py                 # the working tree
    python benchmarks/code_shape.py --rev d54e0b9   # a commit (read with `git show`), to compare before and after

Reads the source with `ast` (nothing is imported). Prints a Markdown table, one row per module of
`quiddler_env/core` and `quiddler_env/envs`, then the functions with 12 or more parameters and those over
80 lines.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("quiddler_env/core", "quiddler_env/envs")
MANY_PARAMETERS = 12
LONG_FUNCTION = 80


def sources(rev: str | None) -> dict[str, str]:
    """Path -> source of every module in FOLDERS, from the working tree or from commit `rev`."""
    if rev is None:
        return {
            str(path.relative_to(ROOT)): path.read_text()
            for folder in FOLDERS
            for path in sorted((ROOT / folder).glob("*.py"))
        }
    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", rev, *(f"{f}/" for f in FOLDERS)],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    return {
        path: subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        for path in sorted(listing)
        if path.endswith(".py")
    }


def functions(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, parameters, lines) of every function in `tree`, methods included (self and cls not counted)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            count = len([n for n in names if n not in ("self", "cls")]) + bool(args.vararg) + bool(args.kwarg)
            out.append((node.name, count, node.end_lineno - node.lineno + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", help="a git commit to read instead of the working tree")
    args = parser.parse_args()
    print("| module | lines | most parameters | longest function |")
    print("|---|---|---|---|")
    many, long = [], []
    for path, text in sources(args.rev).items():
        found = functions(ast.parse(text))
        lines = len(text.splitlines())
        if not found:
            print(f"| {path} | {lines} | - | - |")
            continue
        widest = max(found, key=lambda f: f[1])
        longest = max(found, key=lambda f: f[2])
        print(f"| {path} | {lines} | {widest[1]} (`{widest[0]}`) | {longest[2]} (`{longest[0]}`) |")
        many += [(path, *f) for f in found if f[1] >= MANY_PARAMETERS]
        long += [(path, *f) for f in found if f[2] > LONG_FUNCTION]
    print(f"\nFunctions with {MANY_PARAMETERS} or more parameters: {len(many)}")
    for path, name, count, _ in sorted(many, key=lambda f: -f[2]):
        print(f"- {path} `{name}`: {count}")
    print(f"\nFunctions over {LONG_FUNCTION} lines: {len(long)}")
    for path, name, _, lines in sorted(long, key=lambda f: -f[3]):
        print(f"- {path} `{name}`: {lines} lines")


if __name__ == "__main__":
    main()
