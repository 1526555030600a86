"""Refuse a release whose installer/data/tools.json still has a PENDING entry.

    python build/check_pins.py [installer/data/tools.json]

A PENDING (or malformed) checksum is a tool the engine refuses to download: a binary
published with one cannot fetch that tool, and for the tracebloc CLI cannot sign anyone in.
Exit 0 when every entry of every tool and platform has a 64-hex-digit SHA-256 and, for the
tracebloc CLI, a cosign cross-check that passed; else exit 1, one line per entry. Standard
library only; the release workflow runs it before anything is signed or published.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent.parent / "installer" / "data" / "tools.json"
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
# What build/pin_tools.py writes when the CLI's keyless signature verified.
COSIGNED = "and the binary's cosign keyless signature"


def problems(document: dict[str, Any]) -> list[str]:
    found = []
    tools = document.get("tools")
    if not isinstance(tools, dict) or not tools:
        return ["no tools are pinned"]
    for name, tool in sorted(tools.items()):
        platforms = tool.get("platforms") if isinstance(tool, dict) else None
        if not isinstance(platforms, dict) or not platforms:
            found.append(f"{name}: no platforms")
            continue
        for platform, entry in sorted(platforms.items()):
            sha = entry.get("sha256", "") if isinstance(entry, dict) else ""
            if not _HEX64.fullmatch(str(sha)):
                found.append(
                    f"{name} {tool.get('version', '?')} {platform}: sha256 {sha or 'missing'}"
                )
            elif name == "tracebloc" and COSIGNED not in str(entry.get("cross_check", "")):
                found.append(
                    f"{name} {tool.get('version', '?')} {platform}: not cross-checked "
                    f"with cosign ({entry.get('cross_check', 'missing')})"
                )
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else TARGET
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"check_pins: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    found = problems(document if isinstance(document, dict) else {})
    for line in found:
        print(f"check_pins: not pinned: {line}", file=sys.stderr)
    if found:
        print(
            f"check_pins: refusing to publish: {len(found)} entr{'y' if len(found) == 1 else 'ies'} "
            f"of {path} not pinned (run build/pin_tools.py where the network is)",
            file=sys.stderr,
        )
        return 1
    print(f"check_pins: every tool in {path} is pinned")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
