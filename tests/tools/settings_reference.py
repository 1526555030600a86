"""Write docs/settings.md, one short row per variable, from installer/decide/variables.py.

    python tests/tools/settings_reference.py          # rewrite it
    python tests/tools/settings_reference.py --check  # exit 1 when it is out of date

tests/test_settings_reference.py runs the check, and that every variable named in the
engine's code is in the registry, so the reference cannot fall behind either.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from installer.decide.variables import ENGINE_SETTINGS, FLAGS, TEST_SEAMS, VARIABLES, Fate  # noqa: E402

TARGET = REPO / "docs" / "settings.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference() -> str:
    read = [(v.name, v.note) for v in VARIABLES if v.fate is Fate.HONOURED]
    read += [(s.name, s.note) for s in ENGINE_SETTINGS]
    gone = [(v.name, v.fate.value, v.note) for v in VARIABLES if v.fate is not Fate.HONOURED]
    flags = [(f.name, f.note) for f in FLAGS if f.fate is Fate.HONOURED and f.name.startswith("--")]
    lines = [
        "# Settings",
        "",
        "Every environment variable tracebloc-installer reads, one row each. Generated from",
        "`installer/decide/variables.py` by `tests/tools/settings_reference.py`; do not edit by",
        "hand. What moving from the old scripts changes: [MIGRATION.md](../MIGRATION.md).",
        "Command-line options: `tracebloc-installer help COMMAND`.",
        "",
        "| Variable | What it does |",
        "|---|---|",
        *(
            f"| `{name}` | {_cell(note)} |"
            for name, note in sorted(read, key=lambda r: r[0].upper())
        ),
        "",
        "## The tests' seams",
        "",
        "Read only by the tests; each is honoured only in the conditions it names.",
        "",
        "| Variable | What it does |",
        "|---|---|",
        *(f"| `{s.name}` | {_cell(s.note)} |" for s in TEST_SEAMS),
        "",
        "## Flags the old scripts took",
        "",
        "| Flag | What it does |",
        "|---|---|",
        *(f"| `{name}` | {_cell(note)} |" for name, note in flags),
        "",
        "## Variables no longer read",
        "",
        "| Variable | Why |",
        "|---|---|",
        *(f"| `{name}` | {fate}: {_cell(note)} |" for name, fate, note in gone),
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    if "--check" in sys.argv[1:]:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != reference():
            print(
                f"{TARGET} is out of date: run python tests/tools/settings_reference.py",
                file=sys.stderr,
            )
            return 1
        return 0
    TARGET.write_text(reference(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
