"""Build the Terrace Foundation assets with the hou API from the network spec (hython only).

Usage::

    hython scripts/build_hda.py [OUTDIR]      # default OUTDIR: build/hda

Writes ``OUTDIR/terrace_foundation.hda`` and ``OUTDIR/terrace_foundation_numpy.hda`` (single-file
libraries), installs them, and checks each new asset against the spec with
``validate_network``; exits 1 and lists the differences when they disagree. The checked-in
``otls/`` folders are written without Houdini by ``python -m terrace_foundation.houdini.write_hda``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python3.10libs"))

import hou  # noqa: E402

from terrace_foundation.houdini.build import build_asset, validate_network  # noqa: E402
from terrace_foundation.houdini.network import ASSETS  # noqa: E402


def main(argv: list[str]) -> int:
    outdir = argv[0] if argv else os.path.join("build", "hda")
    os.makedirs(outdir, exist_ok=True)
    failed = False
    for spec in ASSETS:
        path = os.path.join(outdir, spec.library)
        try:
            node = build_asset(spec, path)
        except hou.Error as exc:
            print(f"build_hda: {spec.type_name}: {exc.instanceMessage()}", file=sys.stderr)
            return 1
        problems = validate_network(node, spec)
        for p in problems:
            print(f"build_hda: {spec.type_name}: {p}", file=sys.stderr)
        failed |= bool(problems)
        print(path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
