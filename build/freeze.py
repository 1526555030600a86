"""Build the one-file tracebloc-installer binary for this OS and architecture.

    python -m pip install -e '.[build]'
    python build/freeze.py            # --no-smoke: build only; --dist DIR: elsewhere than dist/

Runs PyInstaller on build/tracebloc-installer.spec (work files under build/pyinstaller/,
git-ignored), moves the result to `dist/tracebloc-installer-<os>-<arch>` (`.exe` on Windows:
the release asset names packaging/install.sh and install.ps1 download), records its SHA-256
in `dist/SHA256SUMS` (build/sums.py), then smoke-runs `--version` and `probe --json`.
Exit 0 only when all of that worked.

Reproducible: PyInstaller runs with PYTHONHASHSEED=0 and SOURCE_DATE_EPOCH set to the
commit time (`git log -1 --format=%ct`), so two builds of one commit on one machine are
byte-identical (build/check_reproducible.py proves it).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import re
import shutil
import subprocess  # noqa: TID251 - a build script, not the engine
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

BUILD = Path(__file__).resolve().parent
REPO = BUILD.parent
sys.path.insert(0, str(BUILD))

import sums  # noqa: E402 - build/sums.py, beside this file

SPEC = BUILD / "tracebloc-installer.spec"
WORK = BUILD / "pyinstaller"
DIST = REPO / "dist"
PRODUCT = "tracebloc-installer"
# The commit time when there is no git history (a source tarball): any fixed value keeps
# builds reproducible; 1980-01-01 is the earliest a zip timestamp can hold.
FALLBACK_EPOCH = 315532800

_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows"}
_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}


def asset_name(os_: str, arch: str) -> str:
    """The release file name the bootstrap scripts download."""
    return f"{PRODUCT}-{os_}-{arch}" + (".exe" if os_ == "windows" else "")


def this_platform() -> tuple[str, str]:
    os_ = _OS.get(sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform)
    machine = platform.machine().lower()
    return os_, _ARCH.get(machine, machine)


def package_version() -> str:
    """`__version__` from installer/__init__.py, read without importing the package."""
    text = (REPO / "installer" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.MULTILINE)
    if match is None:
        raise SystemExit("installer/__init__.py has no __version__")
    return match.group(1)


def source_date_epoch(env: Mapping[str, str]) -> str:
    """The caller's SOURCE_DATE_EPOCH, else the last commit's time, else a fixed value."""
    if env.get("SOURCE_DATE_EPOCH", "").strip().isdigit():
        return env["SOURCE_DATE_EPOCH"].strip()
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct"], cwd=REPO, capture_output=True, text=True,
            timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return str(FALLBACK_EPOCH)
    stamp = out.stdout.strip()
    return stamp if out.returncode == 0 and stamp.isdigit() else str(FALLBACK_EPOCH)


def build_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """PyInstaller's environment: fixed hash seed and timestamps (see the module docstring)."""
    out = dict(os.environ if env is None else env)
    out["PYTHONHASHSEED"] = "0"
    out["SOURCE_DATE_EPOCH"] = source_date_epoch(out)
    return out


def version_tuple(version: str) -> tuple[int, int, int, int]:
    """'1.2.3rc1' -> (1, 2, 3, 0): the release numbers, as the four a Windows version
    resource holds (a pre-release must not sort above its release)."""
    release = re.match(r"\d+(?:\.\d+)*", version)
    numbers = [int(part) for part in release.group(0).split(".")[:4]] if release else []
    padded = (numbers + [0, 0, 0, 0])[:4]
    return padded[0], padded[1], padded[2], padded[3]


def version_info_text(version: str, filename: str) -> str:
    """The Windows version resource in PyInstaller's text form (`VSVersionInfo(...)`)."""
    numbers = version_tuple(version)
    strings = {
        "CompanyName": "tracebloc",
        "FileDescription": "tracebloc client installer",
        "FileVersion": version,
        "InternalName": PRODUCT,
        "OriginalFilename": filename,
        "ProductName": PRODUCT,
        "ProductVersion": version,
    }
    table = ",\n          ".join(f"StringStruct({k!r}, {v!r})" for k, v in strings.items())
    text = f"""VSVersionInfo(
  ffi=FixedFileInfo(filevers={numbers!r}, prodvers={numbers!r}, mask=0x3f, flags=0x0,
                    OS=0x40004, fileType=0x1, subtype=0x0, date=(0, 0)),
  kids=[
    StringFileInfo([
      StringTable('040904B0', [
          {table}])]),
    VarFileInfo([VarStruct('Translation', [0x0409, 1200])])
  ]
)
"""
    ast.parse(text, mode="eval")  # PyInstaller eval()s it: a syntax error must fail here
    return text


def pyinstaller(
    work: Path, version_file: Path | None, env: Mapping[str, str], strip: bool = True
) -> Path:
    """Run PyInstaller on the spec; return the binary it made (under `work`)."""
    spec_args = ["--version-file", str(version_file)] if version_file else []
    spec_args += [] if strip else ["--no-strip"]
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--workpath", str(work / "work"), "--distpath", str(work / "dist"), str(SPEC),
         *(["--", *spec_args] if spec_args else [])],
        check=True, cwd=REPO, env=dict(env),
    )  # fmt: skip
    built = work / "dist" / (PRODUCT + (".exe" if sys.platform == "win32" else ""))
    if not built.is_file():
        raise SystemExit(f"PyInstaller finished but {built} is missing")
    return built


def smoke(binary: Path, version: str) -> dict[str, float]:
    """Run the binary as a user would; return the wall time of each check."""
    timings: dict[str, float] = {}
    env = {**os.environ, "TB_PROBE_TIMEOUT_S": "10"}  # no cluster here must still answer fast
    with tempfile.TemporaryDirectory(prefix="tb-smoke-") as cwd:
        for label, args in (("--version", ["--version"]), ("probe --json", ["probe", "--json"])):
            started = time.perf_counter()
            result = subprocess.run(
                [str(binary), *args], capture_output=True, text=True, timeout=120,
                stdin=subprocess.DEVNULL, env=env, cwd=cwd,
            )  # fmt: skip
            timings[label] = time.perf_counter() - started
            if result.returncode != 0:
                raise SystemExit(
                    f"smoke test `{binary.name} {' '.join(args)}` exited {result.returncode}:\n"
                    f"{result.stdout}{result.stderr}"
                )
            if label == "--version" and result.stdout.split() != [PRODUCT, version]:
                raise SystemExit(f"--version printed {result.stdout!r}, not {PRODUCT} {version}")
            if label == "probe --json":
                missing = {"machine", "cluster", "release", "training"} - json.loads(
                    result.stdout
                ).keys()
                if missing:
                    raise SystemExit(f"probe --json lacks {sorted(missing)}")
            print(f"smoke: {binary.name} {label}: exit 0 in {timings[label]:.2f}s")
    return timings


def freeze(
    dist: Path = DIST, work: Path = WORK, env: Mapping[str, str] | None = None,
    strip: bool = True,
) -> Path:
    """Build into `dist`; return the release binary's path. SHA256SUMS is updated beside it.
    `strip=False` (Linux: keep symbols) exists for the size benchmark, never for a release."""
    os_, arch = this_platform()
    name = asset_name(os_, arch)
    version = package_version()
    environment = build_env(env)
    work.mkdir(parents=True, exist_ok=True)
    version_file = None
    if os_ == "windows":
        version_file = work / "version_info.txt"
        version_file.write_text(version_info_text(version, name), encoding="utf-8")
    print(f"freeze: {name} {version} (SOURCE_DATE_EPOCH={environment['SOURCE_DATE_EPOCH']}, "
          f"PYTHONHASHSEED=0)")  # fmt: skip
    built = pyinstaller(work, version_file, environment, strip)
    dist.mkdir(parents=True, exist_ok=True)
    binary = dist / name
    binary.unlink(missing_ok=True)  # Windows cannot move onto an existing file
    shutil.move(str(built), binary)
    hexdigest = sums.record(binary)
    print(f"built {binary} ({binary.stat().st_size / (1 << 20):.1f} MiB)")
    print(f"{binary.parent / 'SHA256SUMS'}: {hexdigest}  {name}")
    return binary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-smoke", action="store_true", help="build only")
    parser.add_argument("--dist", type=Path, default=DIST, help="output directory (dist/)")
    parser.add_argument("--work", type=Path, default=WORK,
                        help="PyInstaller's work directory (build/pyinstaller/)")  # fmt: skip
    args = parser.parse_args(argv)
    binary = freeze(args.dist.resolve(), args.work.resolve())
    if not args.no_smoke:
        smoke(binary, package_version())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
