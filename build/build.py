"""Build the one-file tracebloc-installer binary for this OS and architecture.

    python -m pip install -e '.[build]'
    python build/build.py

Runs PyInstaller on build/tracebloc-installer.spec with its work and output directories
under build/pyinstaller/ (git-ignored), names the binary as a release asset
(`tracebloc-installer-<os>-<arch>`, `.exe` on Windows: the names packaging/install.sh and
install.ps1 download), writes `<binary>.sha256` beside it, then smoke-runs `--version` and
`probe --json`. Exit 0 only when all of that worked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess  # noqa: TID251 - a build script, not the engine
import sys
import time
from pathlib import Path

BUILD = Path(__file__).resolve().parent
REPO = BUILD.parent
SPEC = BUILD / "tracebloc-installer.spec"
WORK = BUILD / "pyinstaller" / "work"
DIST = BUILD / "pyinstaller" / "dist"

_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows"}
_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}


def asset_name(os_: str, arch: str) -> str:
    """The release file name the bootstrap scripts download."""
    return f"tracebloc-installer-{os_}-{arch}" + (".exe" if os_ == "windows" else "")


def this_platform() -> tuple[str, str]:
    os_ = _OS.get(sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform)
    machine = platform.machine().lower()
    return os_, _ARCH.get(machine, machine)


def write_checksum(binary: Path) -> Path:
    """`<hex>  <name>\\n` beside the binary: the format `sha256sum -c` and install.sh read."""
    digest = hashlib.sha256()
    with binary.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    out = binary.with_name(binary.name + ".sha256")
    out.write_text(f"{digest.hexdigest()}  {binary.name}\n", encoding="ascii", newline="\n")
    return out


def pyinstaller() -> Path:
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean",
         "--workpath", str(WORK), "--distpath", str(DIST), str(SPEC)],
        check=True, cwd=REPO,
    )  # fmt: skip
    built = DIST / ("tracebloc-installer.exe" if sys.platform == "win32" else "tracebloc-installer")
    if not built.is_file():
        raise SystemExit(f"PyInstaller finished but {built} is missing")
    return built


def smoke(binary: Path) -> dict[str, float]:
    """Run the binary as a user would; return the wall time of each check."""
    timings: dict[str, float] = {}
    for label, args in (("--version", ["--version"]), ("probe --json", ["probe", "--json"])):
        started = time.perf_counter()
        result = subprocess.run(
            [str(binary), *args], capture_output=True, text=True, timeout=120,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        timings[label] = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(
                f"smoke test `{binary.name} {' '.join(args)}` exited {result.returncode}:\n"
                f"{result.stdout}{result.stderr}"
            )
        if label == "probe --json":
            document = json.loads(result.stdout)
            missing = {"machine", "cluster", "release", "training"} - document.keys()
            if missing:
                raise SystemExit(f"probe --json lacks {sorted(missing)}")
        print(f"smoke: {binary.name} {label}: exit 0 in {timings[label]:.2f}s")
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-smoke", action="store_true", help="build only")
    args = parser.parse_args(argv)

    built = pyinstaller()
    os_, arch = this_platform()
    binary = DIST / asset_name(os_, arch)
    shutil.move(str(built), binary)
    checksum = write_checksum(binary)
    size_mib = binary.stat().st_size / (1 << 20)
    print(f"built {binary} ({size_mib:.1f} MiB)")
    print(f"checksum {checksum}: {checksum.read_text(encoding='ascii').strip()}")
    if not args.no_smoke:
        # A small deadline: with no cluster the smoke run should still answer promptly.
        os.environ.setdefault("TB_PROBE_TIMEOUT_S", "10")
        smoke(binary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
