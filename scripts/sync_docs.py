"""Write the generated parameter tables into the docs (from the parameter registry).

Usage::

    python3 scripts/sync_docs.py          # rewrite the tables in docs/cli.md, docs/houdini.md
    python3 scripts/sync_docs.py --check  # exit 1 when a table differs (what the test checks)

Each table sits between ``<!-- parameters:<table> begin -->`` and ``... end -->`` markers
and is :func:`terrace_foundation.params.markdown_table` of that table: the method parameters'
flags and the CLI's run options in docs/cli.md, the asset parameters and the run options of
``scripts/cook.py`` in docs/houdini.md.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from terrace_foundation.params import markdown_table

ROOT = Path(__file__).resolve().parents[1]
#: docs file -> the tables it holds (names of :data:`terrace_foundation.params.TABLES`)
TABLES = {"docs/cli.md": ("cli", "cli-options"), "docs/houdini.md": ("houdini", "cook-options")}


def synced(text: str, tables: str | tuple[str, ...]) -> str:
    """``text`` with its tables (one name or several) regenerated."""
    for table in (tables,) if isinstance(tables, str) else tables:
        begin = f"<!-- parameters:{table} begin -->"
        end = f"<!-- parameters:{table} end -->"
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise ValueError(f"no {begin} ... {end} block")
        text = pattern.sub(lambda m: f"{begin}\n{markdown_table(table)}{end}", text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 scripts/sync_docs.py", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check; exit 1 on a difference")
    args = ap.parse_args(argv)
    stale = []
    for rel, tables in TABLES.items():
        path = ROOT / rel
        text = path.read_text(encoding="utf-8")
        new = synced(text, tables)
        if new != text:
            stale.append(rel)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for rel in stale:
        print(f"{rel}: parameter table {'out of date' if args.check else 'rewritten'}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
