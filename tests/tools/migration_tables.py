"""Write MIGRATION.md's tables of the scripts' settings from installer/decide/variables.py.

    python tests/tools/migration_tables.py          # rewrite the section in place
    python tests/tools/migration_tables.py --check  # exit 1 when it is out of date

tests/test_packaging.py runs the check, so the tables cannot drift from the registry.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from installer.decide.variables import FLAGS, LOCAL_CLUSTER, VARIABLES, Fate, Upstream  # noqa: E402

MIGRATION = REPO / "MIGRATION.md"
BEGIN = "<!-- generated from installer/decide/variables.py: begin -->"
END = "<!-- generated from installer/decide/variables.py: end -->"
TWINS = {"both": "both", "bash": "bash", "powershell": "PowerShell"}


def _fate(item: Upstream) -> str:
    if item.fate is Fate.HONOURED:
        return "honoured" + (" by the local-cluster path" if item.by == LOCAL_CLUSTER else "")
    return item.fate.value


def _row(item: Upstream) -> str:
    note = item.note.replace("|", "\\|")
    return f"| `{item.name}` | {TWINS[item.scripts]} | {_fate(item)} | {note} |"


def tables() -> str:
    head = "| {} | Twin | Fate | What now |\n|---|---|---|---|"
    return "\n".join(
        [
            BEGIN,
            "",
            head.format("Variable"),
            *(_row(v) for v in VARIABLES),
            "",
            head.format("Flag"),
            *(_row(f) for f in FLAGS),
            "",
            END,
        ]
    )


def rewritten(text: str) -> str:
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"MIGRATION.md has no {BEGIN} … {END} block")
    return pattern.sub(lambda _: tables(), text)


def main() -> int:
    text = MIGRATION.read_text(encoding="utf-8")
    new = rewritten(text)
    if "--check" in sys.argv[1:]:
        return 0 if new == text else 1
    MIGRATION.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
