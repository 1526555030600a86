"""What building the redactor costs for a long secret (a registry token), in time and memory.

Not a test (no `test_` prefix, never collected): run it from the repository root with the
project's virtualenv,

    python tests/benchmarks/bench_redact.py [--lengths 100 2402 10240 65536] [--repeat 3]

Each length is measured in a fresh interpreter (so the memory is that build's alone): the
wall time of `Redactor([secret])` (median of --repeat builds, a new secret each time) and the
peak resident memory it added. It also times `version` as a process with the secret in
TRACEBLOC_REGISTRY_PASSWORD, the case the issue measured (11-37 s and 352 MiB at 2,402
characters before the cut matcher was made linear). Target at 10 KB: < 0.5 s, < 30 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET_S, TARGET_MIB = 0.5, 30.0

_CHILD = r"""
import json, random, resource, string, sys, time
from installer.decide.redact import Redactor
length, repeat = int(sys.argv[1]), int(sys.argv[2])
alphabet = string.ascii_letters + string.digits + "-_.%/:+="
import yaml  # the redactor imports it on first use: not part of what is measured
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
times = []
for seed in range(repeat):
    secret = "".join(random.Random(seed).choice(alphabet) for _ in range(length))
    started = time.perf_counter()
    redactor = Redactor([secret])
    times.append(time.perf_counter() - started)
    assert redactor("token " + secret + "\n") == "token ********\n"
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
print(json.dumps({"times": times, "extra_mib": (after - before) * scale / 2**20}))
"""


def measure(length: int, repeat: int) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(length), str(repeat)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    doc = json.loads(out)
    return statistics.median(doc["times"]), doc["extra_mib"]


def version_wall(length: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRACEBLOC_REGISTRY_PASSWORD": "t" * length}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "installer", "version"], env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


def main() -> int:
    if sys.platform == "win32":
        print("needs the resource module (POSIX)")
        return 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 2402, 10240, 65536])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"Redactor([secret]) build, median of {args.repeat}, Python {sys.version.split()[0]}")
    print(f"{'length':>8} {'build (s)':>10} {'extra MiB':>10} {'version (s)':>12}")
    failed = False
    for length in args.lengths:
        wall, mib = measure(length, args.repeat)
        print(f"{length:>8} {wall:>10.3f} {mib:>10.1f} {version_wall(length):>12.2f}")
        if length <= 10240 and (wall >= TARGET_S or mib >= TARGET_MIB):
            failed = True
    print(
        f"target up to 10,240 characters: build < {TARGET_S} s and < {TARGET_MIB:g} MiB: "
        + ("MISSED" if failed else "met")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
