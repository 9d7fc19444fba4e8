"""What every reader checks of a file before it parses it, with one message per problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import TerraceInputError

__all__ = ["check_file", "os_problem", "read_json"]


def os_problem(err: OSError) -> str:
    """The operating system's words for ``err`` (its strerror, else its text or type)."""
    return err.strerror or str(err) or type(err).__name__


def check_file(path: Path) -> None:
    """Refuse a ``path`` that does not exist or is a folder."""
    if not path.exists():
        raise TerraceInputError("file not found", str(path))
    if path.is_dir():
        raise TerraceInputError("is a folder, not a file", str(path))


def read_json(path: Path, what: str) -> Any:
    """Parse the UTF-8 JSON file ``path``; every failure is one line naming it.

    ``what`` completes "JSON nested too deeply to be ..." (``"GeoJSON"``, ``"a sidecar"``).
    A leading byte-order mark (Windows editors write one) is skipped: RFC 8259 section 8.1
    lets a parser ignore it.
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8-sig") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise TerraceInputError(
            f"not valid JSON ({e.msg} at line {e.lineno} column {e.colno}; truncated?)",
            source) from None
    except UnicodeDecodeError:
        raise TerraceInputError("not a UTF-8 JSON text file", source) from None
    except ValueError as e:     # an integer of more digits than Python converts (4300)
        first = " ".join(str(e).split(";")[0].split())
        raise TerraceInputError(f"not usable JSON ({first})", source) from None
    except RecursionError:
        raise TerraceInputError(f"JSON nested too deeply to be {what}", source) from None
    except OSError as e:
        raise TerraceInputError(f"cannot read: {os_problem(e)}", source) from None
