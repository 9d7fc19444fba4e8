"""Write the generated parameter tables into the docs (from the parameter registry).

Usage::

    python3 scripts/sync_docs.py          # rewrite the tables in docs/cli.md, docs/houdini.md
    python3 scripts/sync_docs.py --check  # exit 1 when a table differs (what the test checks)

Each table sits between ``<!-- parameters:<front end> begin -->`` and ``... end -->`` markers
and is :func:`terrace_foundation.params.markdown_table` of that front end.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from terrace_foundation.params import markdown_table

ROOT = Path(__file__).resolve().parents[1]
#: docs file -> front end whose table it holds
TABLES = {"docs/cli.md": "cli", "docs/houdini.md": "houdini"}


def synced(text: str, front_end: str) -> str:
    """``text`` with its table for ``front_end`` regenerated."""
    begin = f"<!-- parameters:{front_end} begin -->"
    end = f"<!-- parameters:{front_end} end -->"
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"no {begin} ... {end} block")
    return pattern.sub(lambda m: f"{begin}\n{markdown_table(front_end)}{end}", text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 scripts/sync_docs.py", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check; exit 1 on a difference")
    args = ap.parse_args(argv)
    stale = []
    for rel, front_end in TABLES.items():
        path = ROOT / rel
        text = path.read_text(encoding="utf-8")
        new = synced(text, front_end)
        if new != text:
            stale.append(rel)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for rel in stale:
        print(f"{rel}: parameter table {'out of date' if args.check else 'rewritten'}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
