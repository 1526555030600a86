"""SHA256SUMS files: the `<hex>  <name>` lines `sha256sum -c` and packaging/install.sh read.

    python build/sums.py merge -o release/SHA256SUMS linux/SHA256SUMS darwin/SHA256SUMS ...
    python build/sums.py check dist/SHA256SUMS        # every entry against the file beside it

Each build writes (or updates) the SHA256SUMS in its output directory with one line for the
binary it made; the release job merges the per-OS files into one. Lines are sorted by name
and end in LF on every OS, so the same set of binaries always gives the same file. Two
different digests for one name is an error, never a silent choice.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

_LINE = re.compile(r"^([0-9a-f]{64}) [ *](\S.*)$")


def digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def parse(text: str, source: str = "SHA256SUMS") -> dict[str, str]:
    """name -> hex digest. Blank lines are ignored; anything else malformed is an error."""
    entries: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = _LINE.match(line.rstrip("\r"))
        if match is None:
            raise ValueError(f"{source}:{number}: not a `<sha256>  <name>` line: {line!r}")
        hexdigest, name = match.groups()
        _add(entries, name, hexdigest, source)
    return entries


def render(entries: Mapping[str, str]) -> str:
    return "".join(f"{entries[name]}  {name}\n" for name in sorted(entries))


def merge(sources: Iterable[Mapping[str, str]]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for entries in sources:
        for name, hexdigest in entries.items():
            _add(merged, name, hexdigest, "merge")
    return merged


def _add(entries: dict[str, str], name: str, hexdigest: str, source: str) -> None:
    if entries.get(name, hexdigest) != hexdigest:
        raise ValueError(f"{source}: two different SHA-256 digests for {name}")
    entries[name] = hexdigest


def read(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    return parse(path.read_text(encoding="ascii"), str(path))


def write(path: Path, entries: Mapping[str, str]) -> None:
    path.write_bytes(render(entries).encode("ascii"))


def record(binary: Path, sums: Path | None = None) -> str:
    """Put `binary`'s digest into the SHA256SUMS beside it (replacing an older entry for the
    same name, keeping the others); return the digest."""
    sums = sums or binary.with_name("SHA256SUMS")
    entries = read(sums)
    entries[binary.name] = digest(binary)
    write(sums, entries)
    return entries[binary.name]


def check(sums: Path) -> list[str]:
    """Problems found verifying every entry against the files beside `sums`; [] when all match."""
    problems = []
    for name, expected in read(sums).items():
        target = sums.parent / name
        if not target.is_file():
            problems.append(f"{name}: missing")
        elif digest(target) != expected:
            problems.append(f"{name}: SHA-256 mismatch")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    merging = commands.add_parser("merge", help="combine SHA256SUMS files into one")
    merging.add_argument("inputs", nargs="+", type=Path)
    merging.add_argument("-o", "--output", type=Path, required=True)
    checking = commands.add_parser("check", help="verify files against a SHA256SUMS")
    checking.add_argument("sums", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            merged = merge(read(path) for path in args.inputs)
            write(args.output, merged)
            print(f"{args.output}: {len(merged)} entries")
            return 0
        problems = check(args.sums)
    except (OSError, ValueError) as exc:
        print(f"sums: {exc}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"sums: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
