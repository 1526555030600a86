"""Build the binary twice, in separate directories, and require identical SHA-256.

    python build/check_reproducible.py [--keep DIR]
    python build/check_reproducible.py --against dist/tracebloc-installer-linux-x86_64

Each build runs build/freeze.py's `freeze()` (PYTHONHASHSEED=0, SOURCE_DATE_EPOCH from the
commit) with its own work and output directories, so neither a path nor a cache can make
them agree by accident. `--against` builds once and compares with a binary already built
from the same commit (what .ci/run does after its build). On a mismatch it prints the first differing byte
offset and the archive members whose bytes differ. Exit 0 only when the digests match.
"""

from __future__ import annotations

import argparse
import subprocess  # noqa: TID251 - a build script, not the engine
import sys
import tempfile
from pathlib import Path

BUILD = Path(__file__).resolve().parent
sys.path.insert(0, str(BUILD))

import freeze  # noqa: E402 - build/freeze.py, beside this file
import sums  # noqa: E402


def first_difference(a: bytes, b: bytes) -> int:
    for offset, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return offset
    return min(len(a), len(b))


def archive_entries(binary: Path) -> dict[str, str]:
    """Archive member -> its sizes and type, without its offset (one changed member shifts
    every later offset), from PyInstaller's archive viewer (CArchive and the PYZ inside)."""
    viewer = Path(sys.executable).with_name("pyi-archive_viewer")
    result = subprocess.run(
        [str(viewer), "--list", "--recursive", str(binary)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    entries = {}
    for line in result.stdout.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) == 6:  # CArchive: position, length, uncompressed, compressed?, type, name
            entries[fields[5]] = ", ".join(fields[1:5])
        elif len(fields) == 4 and fields[0].isdigit():  # PYZ: type, position, length, name
            entries[fields[3]] = f"{fields[0]}, {fields[2]}"
    return entries


def explain(a: Path, b: Path) -> None:
    one, two = a.read_bytes(), b.read_bytes()
    print(f"sizes {len(one)} and {len(two)}; first difference at byte {first_difference(one, two)}")
    left, right = archive_entries(a), archive_entries(b)
    changed = sorted(
        name for name in left.keys() | right.keys() if left.get(name) != right.get(name)
    )
    print(
        "archive members that differ (name: first / second):"
        if changed
        else "every archive member has the same size in both: the difference is in content"
    )
    for name in changed[:30]:
        print(f"  {name}: {left.get(name, 'absent')} / {right.get(name, 'absent')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--keep", type=Path, help="build under DIR and keep it (default: a temp dir)"
    )
    parser.add_argument("--against", type=Path, help="compare one new build with this binary")
    args = parser.parse_args(argv)
    if args.against is not None and not args.against.is_file():
        parser.error(f"--against: no file {args.against}")
    with tempfile.TemporaryDirectory(prefix="tb-repro-") as tmp:
        root = (args.keep or Path(tmp)).resolve()
        runs = ("second",) if args.against else ("first", "second")
        binaries = [args.against.resolve()] if args.against else []
        binaries += [
            freeze.freeze(dist=root / run / "dist", work=root / run / "work") for run in runs
        ]
        digests = [sums.digest(binary) for binary in binaries]
        for binary, hexdigest in zip(binaries, digests, strict=True):
            print(f"{hexdigest}  {binary}")
        if digests[0] != digests[1]:
            print("NOT reproducible: the two builds differ", file=sys.stderr)
            explain(*binaries)
            return 1
    print(f"reproducible: both builds of {binaries[0].name} have SHA-256 {digests[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
