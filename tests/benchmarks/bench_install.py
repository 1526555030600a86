"""Critical path of `install`, in units of L, and what `probe` costs on a large cluster.

Not a test (no `test_` prefix, never collected): run it by hand from the repository root,

    python tests/benchmarks/bench_install.py [--latency 0.5 1] [--repeat 3] [--nodes 5000]

1. `install --yes` against fake kubectl/helm whose every call is delayed by L seconds, on a
   fresh cluster, on a re-install (this client already installed with other values, repo
   configured) and on a healthy re-run (installed by a previous run, up to date, ready:
   nothing to change). The ratio (wall(L) - wall(0)) / L is the number of calls on the
   critical path. Printed twice: with every call delayed, and with only the calls that leave
   the machine delayed (`kubectl config view/set-context`, `helm repo list` and `helm search
   repo` read or edit local files; `kubectl version --client` and `helm version` ask the
   binary itself). Targets, with only the off-machine calls delayed: ≤ 4 L fresh, ≤ 5 L
   re-install, ≤ 2.5 L healthy re-run.
2. Which modules `probe` imports with TRACEBLOC_TRAINING_RESOURCES set: no YAML, no
   rendering.
3. `probe --json` on N nodes (default 5,000, each shaped like a real node: labels,
   conditions, 50 images): the size of the JSON read and the probe's peak memory (max RSS of
   the process), target ≤ 100 MiB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.fakes.backend_server import BackendServer  # noqa: E402
from tests.fakes.cluster import FakeCluster, installer_command, node, release_row  # noqa: E402
from tests.fakes.healthy import make_healthy  # noqa: E402

CLIENT_ID = "client-bench"
LOCAL_CALLS = (
    ["config", "view"],
    ["config", "set-context"],
    ["repo", "list"],
    ["version"],
    ["search", "repo"],
)
TARGETS = {"fresh": 4, "re-install": 5, "healthy": 2.5}
CREDENTIALS = {
    "TRACEBLOC_CLIENT_ID": CLIENT_ID,
    "TRACEBLOC_CLIENT_PASSWORD": "bench-password",
    "TRACEBLOC_SKIP_PREFLIGHT": "1",
    "TB_PLAIN": "1",
}


def _delay(cluster: FakeCluster, latency: float, local_too: bool) -> None:
    for rules in cluster.scenario.values():
        for rule in rules:
            local = any(rule["match"][:2] == prefix for prefix in LOCAL_CALLS)
            rule["sleep"] = latency if (local_too or not local) else 0.0
    cluster._save()


def _scenario(root: Path, case: str, backend: BackendServer) -> FakeCluster:
    cluster = FakeCluster(root)
    if case == "healthy":  # a first install, undelayed, then its state as helm shows it
        make_healthy(cluster, {**CREDENTIALS, "TRACEBLOC_BACKEND_URL": backend.url})
        return cluster
    cluster.nodes(node("laptop", "8", "16Gi")).installable()
    if case == "re-install":
        cluster.installed(release_row())
        cluster.values_of(
            "tracebloc",
            "tracebloc",
            {
                "clientId": CLIENT_ID,
                "env": {"RESOURCE_LIMITS": "cpu=7,memory=13Gi", "RESOURCE_PROVENANCE": "installer"},
            },
        )
        cluster.status_of("tracebloc", "deployed")
        cluster.on(
            "helm",
            "repo",
            "list",
            stdout=json.dumps([{"name": "tracebloc", "url": "https://tracebloc.github.io/client"}]),
        )
    else:
        cluster.installed()
    return cluster


def install_wall(
    latency: float, repeat: int, case: str, local_too: bool, backend: BackendServer
) -> float:
    timings = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
            cluster = _scenario(Path(tmp), case, backend)
            _delay(cluster, latency, local_too)
            started = time.monotonic()
            result = cluster.run(
                "install",
                "--yes",
                timeout=120,
                **CREDENTIALS,
                TRACEBLOC_BACKEND_URL=backend.url,
                TB_PROBE_TIMEOUT_S=str(latency + 30),
            )
            timings.append(time.monotonic() - started)
            if result.returncode != 0:
                raise SystemExit(f"install failed at L={latency}: {result.stderr.strip()}")
            unchanged = "nothing to change" in result.stdout
            if unchanged != (case == "healthy"):
                raise SystemExit(
                    f"{case}: the run {'changed nothing' if unchanged else 'changed'}"
                    f" at L={latency}: {result.stderr.strip()}"
                )
    return statistics.median(timings)


def critical_path(latencies: list[float], repeat: int) -> None:
    print(f"install --yes, median of {repeat} runs, Python {sys.version.split()[0]}")
    print(
        f"{'case':<11} {'delayed calls':<16} {'L (s)':>6}  {'wall (s)':>8}  "
        f"{'(wall(L) - wall(0)) / L':>24}  target"
    )
    with BackendServer(default=200) as backend:
        for case, target in TARGETS.items():
            for local_too in (True, False):
                which = "every call" if local_too else "off-machine only"
                base = install_wall(0.0, repeat, case, local_too, backend)
                print(f"{case:<11} {which:<16} {0:>6g}  {base:>8.3f}  {'-':>24}")
                for latency in latencies:
                    wall = install_wall(latency, repeat, case, local_too, backend)
                    ratio = (wall - base) / latency
                    # The targets count round trips that leave the machine; with every call
                    # delayed the row shows what the local calls add, for reference.
                    verdict = (
                        ("met" if ratio <= target + 0.05 else "NOT met")
                        if not local_too
                        else "(reference)"
                    )
                    print(
                        f"{case:<11} {which:<16} {latency:>6g}  {wall:>8.3f}  {ratio:>24.2f}"
                        f"  <= {target} L: {verdict}"
                    )


def probe_imports() -> list[str]:
    code = (
        "import sys\nfrom installer import cli\ncli.main(['probe', '--json'])\n"
        "bad = sorted(m for m in sys.modules if m == 'yaml' or m.startswith('yaml.')"
        " or m in ('installer.decide.render', 'installer.commands.install_plan'))\n"
        "sys.stderr.write('IMPORTED ' + ' '.join(bad) + '\\n')\n"
    )
    with tempfile.TemporaryDirectory(prefix="bench-imports-") as tmp:
        cluster = FakeCluster(Path(tmp))
        env = cluster.env(TRACEBLOC_TRAINING_RESOURCES="cpu=4,memory=16Gi")
        result = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    line = next(x for x in result.stderr.splitlines() if x.startswith("IMPORTED"))
    return line.split()[1:]


def realistic_node(index: int) -> dict[str, Any]:
    item = node(f"ip-10-0-{index // 250}-{index % 250}.eu-west-1.compute.internal", "16", "64Gi")
    item["metadata"].update(
        {
            "uid": f"{index:08d}-aaaa-bbbb-cccc-dddddddddddd",
            "resourceVersion": str(10**6 + index),
            "labels": {f"label-{k}.example.com/key": f"value-{k}" for k in range(12)},
            "annotations": {f"annotation-{k}.example.com/key": "x" * 60 for k in range(6)},
        }
    )
    item["spec"] = {"podCIDR": "10.244.0.0/24", "providerID": f"aws:///eu-west-1a/i-{index:017x}"}
    item["status"].update(
        {
            "capacity": {"cpu": "16", "memory": "65842168Ki", "pods": "110"},
            "conditions": [
                {
                    "type": t,
                    "status": "False",
                    "reason": f"Kubelet{t}",
                    "message": f"kubelet has no {t} problem " + "." * 40,
                    "lastHeartbeatTime": "2026-11-29T10:00:00Z",
                    "lastTransitionTime": "2026-11-01T10:00:00Z",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "images": [
                {
                    "names": [
                        f"registry.example.com/team/image-{k}@sha256:{'0' * 64}",
                        f"registry.example.com/team/image-{k}:v1.{k}.0",
                    ],
                    "sizeBytes": 100_000_000 + k,
                }
                for k in range(50)
            ],
            "nodeInfo": {
                "kernelVersion": "6.1.0",
                "osImage": "Bottlerocket",
                "kubeletVersion": "v1.31.0",
                "containerRuntimeVersion": "containerd://1.7.0",
                "architecture": "amd64",
                "operatingSystem": "linux",
            },
        }
    )
    return item


def probe_memory(count: int) -> tuple[int, float, int]:
    """(bytes of JSON, peak RSS in MiB of `probe --json`, nodes it reported)."""
    with tempfile.TemporaryDirectory(prefix="bench-nodes-") as tmp:
        cluster = FakeCluster(Path(tmp))
        answer = Path(tmp) / "nodes.json"
        # Written by another process: ru_maxrss survives fork and exec, so a benchmark that
        # had built the document itself would pass its own peak on to the probe it starts.
        subprocess.run(
            [sys.executable, __file__, "--write-nodes", str(count), str(answer)],
            check=True,
            timeout=300,
        )
        size = answer.stat().st_size
        # The fake streams the file: its own memory must stay below ours, since the peak
        # measured is the largest of the probe and the children it waited for.
        cluster.on("kubectl", "get", "nodes")
        cluster.scenario["kubectl"][0]["stdout_path"] = str(answer)
        cluster._save()
        cluster.release_absent()
        child = subprocess.Popen(
            [*installer_command(), "probe", "--json"],
            env=cluster.env(),
            cwd=cluster.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit(f"probe on {count} nodes exited {child.returncode}")
        # ru_maxrss: KiB on Linux, bytes on macOS.
        peak = usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
        return size, peak, len(json.loads(out)["cluster"]["nodes"])


def write_nodes(count: int, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [realistic_node(i) for i in range(count)],
            },
            out,
            indent=4,
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--write-nodes"]:
        write_nodes(int(argv[1]), argv[2])
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--latency",
        "-L",
        type=float,
        nargs="+",
        default=[1.0],
        help="per-call delays in seconds (0 is always measured as the base)",
    )
    parser.add_argument("--repeat", "-r", type=int, default=3, help="runs per latency (median)")
    parser.add_argument("--nodes", type=int, default=5000, help="nodes for the memory check")
    parser.add_argument(
        "--install-only",
        action="store_true",
        help="only the critical path of install (the three rows)",
    )
    args = parser.parse_args(argv)

    critical_path(sorted({*args.latency} - {0.0}), args.repeat)
    if args.install_only:
        return 0
    imported = probe_imports()
    print(
        f"\nprobe with TRACEBLOC_TRAINING_RESOURCES imports: "
        f"{', '.join(imported) if imported else 'no YAML, no rendering code'}"
    )
    size, peak, seen = probe_memory(args.nodes)
    print(
        f"\nprobe --json on {seen} nodes: {size / (1 << 20):.1f} MiB of JSON read, peak RSS "
        f"{peak:.1f} MiB ({peak * (1 << 20) / size:.2f}x the JSON); target <= 100 MiB: "
        f"{'met' if peak <= 100 else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
