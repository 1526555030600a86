"""`FakeCluster`: fake tools on PATH that replay a scripted state, and a CLI runner.

Tests drive the real CLI (`python -m installer …`) and assert on its output and on the exact
calls the fakes logged. `run` calls the entry point in this process (tests/fakes/inprocess.py)
unless the test is marked `subprocess`, TB_TEST_SUBPROCESS is set, the frozen binary is under
test (TB_INSTALLER_BIN) or the run cannot be the same in process; `start` is always a process.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakes import inprocess, workloads
from tests.fakes.executables import executable_path, make_executable, on_windows

FAKES = Path(__file__).resolve().parent
REPO = FAKES.parent.parent

HELM_NOT_FOUND = "Error: release: not found\n"
NO_REPOS_JSON = "[]\n"  # `helm repo list -o json` with nothing configured (helm 4)

# What the fakes say their version is unless a test scripts otherwise: in the supported
# range, so the engine uses them from PATH (see installer/decide/pins.py SUPPORTED).
FAKE_VERSIONS = {"kubectl": "v1.37.1", "helm": "v4.2.3", "k3d": "v5.9.0"}


def version_answer(tool: str, version: str) -> str:
    """`<tool> version` output, in the form the engine asks for (decide/pins.VERSION_ARGS)."""
    if tool == "kubectl":
        return json.dumps(
            {
                "clientVersion": {"gitVersion": version, "platform": "linux/amd64"},
                "kustomizeVersion": "v5.7.1",
            }
        )
    if tool == "k3d":
        return f"k3d version {version}\nk3s version v1.33.4-k3s1 (default)\n"
    return version


# What a Windows child needs from the real environment (PATH and USERPROFILE are the fakes').
_WINDOWS_KEPT = (
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERDOMAIN",
)


KUBECONFIG_OF_A_CLUSTER = """\
apiVersion: v1
kind: Config
clusters:
- name: office
  cluster: {server: "https://10.1.2.3:6443"}
contexts:
- name: office
  context: {cluster: office, user: me}
users:
- name: me
  user: {token: not-a-secret}
current-context: office
"""


# True only inside a test (tests/conftest.py) not marked `subprocess`: the benchmarks time
# and measure the engine as a process.
IN_PROCESS = False


def in_process(env: dict[str, str]) -> bool:
    """Whether `FakeCluster.run` calls the engine in this process (see the module docstring)."""
    if not IN_PROCESS or os.environ.get("TB_INSTALLER_BIN", "").strip():
        return False
    if os.environ.get("TB_TEST_SUBPROCESS", "").strip() not in ("", "0"):
        return False
    return inprocess.possible(env)


def installer_command() -> list[str]:
    """How tests start the CLI: the frozen binary named by TB_INSTALLER_BIN (the binary-level
    suite), else the source tree as `python -m installer`."""
    binary = os.environ.get("TB_INSTALLER_BIN", "").strip()
    if binary:
        return [str(Path(binary).resolve())]
    return [sys.executable, "-m", "installer"]


def node(
    name: str,
    cpu: str | None = "4",
    memory: str | None = "16Gi",
    *,
    unschedulable: bool | None = None,
    arch: str | None = None,
    gpus: dict[str, str] | None = None,
    kernel: str | None = None,
    provider_id: str | None = None,
) -> dict[str, Any]:
    allocatable = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    item: dict[str, Any] = {
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {**allocatable, "pods": "110", **(gpus or {})}},
    }
    if arch is not None:
        item["metadata"]["labels"] = {"kubernetes.io/arch": arch, "kubernetes.io/os": "linux"}
    if kernel is not None:
        item["status"]["nodeInfo"] = {"kernelVersion": kernel}
    if unschedulable is not None:
        item.setdefault("spec", {})["unschedulable"] = unschedulable
    if provider_id is not None:
        item.setdefault("spec", {})["providerID"] = provider_id
    return item


def kubeconfig_view(context: str, server: str) -> dict[str, Any]:
    """What `kubectl config view --minify -o json` prints for one context."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context,
        "clusters": [{"name": context, "cluster": {"server": server}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
    }


def daemonset(
    name: str, namespace: str, image: str, release: tuple[str, str] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if release is not None:
        metadata["annotations"] = {
            "meta.helm.sh/release-name": release[0],
            "meta.helm.sh/release-namespace": release[1],
        }
        metadata["labels"] = {"app.kubernetes.io/managed-by": "Helm"}
    return {
        "kind": "DaemonSet",
        "metadata": metadata,
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
    }


def release_row(
    name: str = "tracebloc",
    namespace: str | None = None,
    *,
    status: str = "deployed",
    chart: str = "client-1.4.2",
) -> dict[str, Any]:
    """One row of `helm list -A -o json`."""
    return {
        "name": name,
        "namespace": namespace or name,
        "revision": "3",
        "updated": "2026-11-01 10:00:00.0 +0000 UTC",
        "status": status,
        "chart": chart,
        "app_version": "1.4.2",
    }


def nodes_json(*items: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})


class FakeCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.home = root / "home"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self.scenario_path = root / "scenario.json"
        self.log_path = root / "calls.jsonl"
        self.scenario: dict[str, list[dict[str, Any]]] = {}
        self._save()
        for tool in ("kubectl", "helm"):
            self.install(tool)
        # The user's own cluster is current, as on any machine where kubectl already works;
        # tests of the local k3d cluster remove it (`no_kubeconfig`).
        self.kubeconfig = self.home / ".kube" / "config"
        self.kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        self.kubeconfig.write_text(KUBECONFIG_OF_A_CLUSTER, encoding="utf-8")
        for tool, version in FAKE_VERSIONS.items():
            self.version(tool, version)  # k3d too: a downloaded fake k3d answers
        # On an Apple Silicon Mac the engine proves amd64 emulation before the MySQL 5.7 image
        # (commands/amd64_emulation.py): a Mac with emulation on answers it; tests of a broken one
        # script their own answer (the latest rule wins).
        self.on("docker", "run", "--rm", "--platform", "linux/amd64")

    # --- scripting -------------------------------------------------------------------
    def install(self, tool: str) -> Path:
        """Put an executable named `tool` on the fake PATH (`tool.exe` on Windows)."""
        return make_executable(self.bin / tool, self.program(tool), stdlib_only=True)

    def program(self, tool: str) -> str:
        """The fake's Python source: any copy of it (a downloaded one too) replays this
        cluster's scenario for `tool` and logs to its call log."""
        return (
            "import sys\n"
            f"sys.path.insert(0, {str(FAKES)!r})\n"
            "import fake_tool\n"
            f"sys.exit(fake_tool.main({tool!r}, {str(self.scenario_path)!r}, "
            f"{str(self.log_path)!r}))\n"
        )

    def executable(self, tool: str) -> Path:
        """The file `install(tool)` wrote: what find_tool resolves `tool` to on this OS."""
        return executable_path(self.bin / tool)

    def remove(self, tool: str) -> None:
        self.executable(tool).unlink(missing_ok=True)

    def on(
        self,
        tool: str,
        *match: str,
        stdout: str | bytes = "",
        stderr: str = "",
        rc: int = 0,
        sleep: float = 0.0,
        grandchild: bool = False,
        on_term: int = 0,
        times: int | None = None,
        after: str | None = None,
        before: str | None = None,
        mark: str | None = None,
        write: list[tuple[str, ...]] | None = None,
        outlive: bool = False,
        daemon: bool = False,
        env_has: str | None = None,
    ) -> FakeCluster:
        """Answer calls whose argv holds `match` in order; the latest rule wins. With `times`
        the rule answers that many calls and then yields to the rules added before it."""
        rule: dict[str, Any] = {
            "match": list(match),
            "stderr": stderr,
            "rc": rc,
            "sleep": sleep,
            "grandchild": grandchild,
            "on_term": on_term,
            "outlive": outlive,
        }
        if times is not None:
            rule.update(times=times, id=sum(len(rules) for rules in self.scenario.values()))
        for key, value in (
            ("after", after),
            ("before", before),
            ("mark", mark),
            ("env_has", env_has),
        ):
            if value:
                rule[key] = value
        if write:
            rule["write"] = [list(pair) for pair in write]
        if daemon:
            rule["daemon"] = True
        if isinstance(stdout, bytes):
            rule["stdout_b64"] = base64.b64encode(stdout).decode()
        else:
            rule["stdout"] = stdout
        self.scenario.setdefault(tool, []).insert(0, rule)  # the latest rule wins
        self._save()
        return self

    def version(self, tool: str, version: str, **kwargs: Any) -> FakeCluster:
        """`<tool> version` answers `version` (the latest call wins)."""
        return self.on(tool, "version", stdout=version_answer(tool, version), **kwargs)

    def nodes(self, *items: dict[str, Any], **kwargs: Any) -> FakeCluster:
        return self.on("kubectl", "get", "nodes", stdout=nodes_json(*items), **kwargs)

    def view(self, context: str, server: str) -> FakeCluster:
        return self.on(
            "kubectl", "config", "view", stdout=json.dumps(kubeconfig_view(context, server))
        )

    def runtime_class(self, present: bool) -> FakeCluster:
        if present:
            return self.on(
                "kubectl", "get", "runtimeclass", stdout="runtimeclass.node.k8s.io/nvidia\n"
            )
        return self.on(
            "kubectl",
            "get",
            "runtimeclass",
            rc=1,
            stderr='Error from server (NotFound): runtimeclasses.node.k8s.io "nvidia" not found\n',
        )

    def daemonsets(self, *items: dict[str, Any]) -> FakeCluster:
        return self.on(
            "kubectl",
            "get",
            "daemonsets",
            stdout=json.dumps({"kind": "List", "items": list(items)}),
        )

    def release_absent(self) -> FakeCluster:
        return self.on("helm", "get", "values", stderr=HELM_NOT_FOUND, rc=1)

    def release_values(self, values: dict[str, Any] | None, **kwargs: Any) -> FakeCluster:
        return self.on("helm", "get", "values", stdout=json.dumps(values), **kwargs)

    # --- what `install` reads and runs -------------------------------------------------
    def installed(self, *rows: dict[str, Any], **kwargs: Any) -> FakeCluster:
        """`helm list -A` answers with these rows (see `release_row`)."""
        return self.on("helm", "list", stdout=json.dumps(list(rows)), **kwargs)

    def values_of(
        self, name: str, namespace: str, values: dict[str, Any] | None, **kwargs: Any
    ) -> FakeCluster:
        return self.on(
            "helm", "get", "values", name, "-n", namespace, stdout=json.dumps(values), **kwargs
        )

    def status_of(self, name: str, status: str) -> FakeCluster:
        return self.on(
            "helm", "status", name, stdout=json.dumps({"name": name, "info": {"status": status}})
        )

    def installable(self) -> FakeCluster:
        """Everything an install runs after its reads succeeds: repo, metrics API, helm
        upgrade, rollback/uninstall, kube context."""
        # helm 4 (the pinned version) answers an empty `[]`; helm 3 exited 1 with
        # "Error: no repositories to show" (tests/test_apply.py scripts that one).
        self.on("helm", "repo", "list", stdout=NO_REPOS_JSON)
        self.on("helm", "repo", "add", stdout='"tracebloc" has been added\n')
        self.on("helm", "repo", "update", stdout="Update Complete.\n")
        self.on("helm", "upgrade", "--install", stdout="Release has been upgraded.\n")
        self.on("helm", "rollback", stdout="Rollback was a success!\n")
        self.on("helm", "uninstall", stdout="release uninstalled\n")
        self.on(
            "kubectl",
            "get",
            "apiservice",
            stdout=json.dumps(
                {"status": {"conditions": [{"type": "Available", "status": "True"}]}}
            ),
        )
        self.on("kubectl", "config", "set-context", stdout="Context modified.\n")
        self.workloads(*workloads.client())
        return self.kube_target()

    def kube_target(
        self, context: str = "k3d-tracebloc", server: str = "https://127.0.0.1:6443"
    ) -> FakeCluster:
        """What `kubectl config view --minify -o json` answers: the context and its server."""
        return self.on(
            "kubectl",
            "config",
            "view",
            stdout=json.dumps(
                {
                    "kind": "Config",
                    "current-context": context,
                    "clusters": [
                        {
                            "name": context,
                            "cluster": {
                                "server": server,
                                "certificate-authority-data": "DATA+OMITTED",
                            },
                        }
                    ],
                    "contexts": [
                        {"name": context, "context": {"cluster": context, "user": "admin"}}
                    ],
                    "users": [{"name": "admin", "user": {"token": "REDACTED"}}],
                }
            ),
        )

    def workloads(self, *items: dict[str, Any], **kwargs: Any) -> FakeCluster:
        """One look at the release's namespace (`tests/fakes/workloads.py` builds the items);
        with `times=N` this state is seen N times, then the state scripted before it. Without
        `times`, `helm get manifest` of each release seen defines exactly these workloads
        (`manifest` scripts a release that defines others)."""
        if "times" not in kwargs:
            for release in workloads.releases_of(*items):
                self.manifest(release, *items)
        return self.on(
            "kubectl", "get", workloads.KINDS, stdout=workloads.listing(*items), **kwargs
        )

    def manifest(self, release: str, *items: dict[str, Any], **kwargs: Any) -> FakeCluster:
        """`helm get manifest <release>` defines these workloads."""
        return self.on(
            "helm", "get", "manifest", release, stdout=workloads.manifest(*items), **kwargs
        )

    def signals(self) -> list[tuple[int, int]]:
        """(pid, signal) of each fake that was asked to stop (rules with `on_term`)."""
        path = Path(str(self.log_path) + ".signals")
        if not path.exists():
            return []
        return [
            (int(a), int(b))
            for a, b in (
                line.split() for line in path.read_text(encoding="utf-8").splitlines() if line
            )
        ]

    def _save(self) -> None:
        self.scenario_path.write_text(json.dumps(self.scenario), encoding="utf-8")

    # --- observing -------------------------------------------------------------------
    def calls(self, tool: str | None = None, *, versions: bool = False) -> list[list[str]]:
        """The argv of each call, in order. `<tool> version` queries (how the engine picks its
        tools, asserted by tests/test_cli_tools.py) are left out unless `versions`."""
        return [
            entry["argv"]
            for entry in self.call_log()
            if (tool is None or entry["tool"] == tool)
            and (versions or entry["argv"][:1] != ["version"])
        ]

    def call_log(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def sleeping_call(self, *argv_start: str, tool: str | None = None, timeout: float = 30) -> int:
        """The pid of the first call whose argv starts with `argv_start` once it is in its
        scripted `sleep`, its `on_term` handler installed: a signal sent now reaches it."""
        import time

        sleeping = Path(str(self.log_path) + ".sleeping")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = set(sleeping.read_text(encoding="utf-8").split()) if sleeping.exists() else set()
            for entry in self.call_log():
                if (
                    (tool is None or entry["tool"] == tool)
                    and str(entry["pid"]) in pids
                    and entry["argv"][: len(argv_start)] == list(argv_start)
                ):
                    return int(entry["pid"])
            time.sleep(0.02)
        raise AssertionError(
            f"no {' '.join(argv_start)} call reached its sleep within {timeout:g}s: {self.calls()}"
        )

    def grandchild_pids(self) -> list[int]:
        """Pids of the descendants started by rules with `grandchild=True`."""
        path = Path(str(self.log_path) + ".grandchildren")
        if not path.exists():
            return []
        return [int(line) for line in path.read_text(encoding="utf-8").split()]

    # --- running the CLI -------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: only the fake tools on PATH, a private HOME.

        On Windows the private home is USERPROFILE, and the variables a Windows process
        cannot do without are kept: SYSTEMROOT (Python before 3.11 cannot even start
        without it), TEMP, and the user's name and domain for icacls. icacls itself is the
        real one, named by TRACEBLOC_ICACLS: System32 on PATH could bring a real nvidia-smi.
        """
        env = {
            "PATH": str(self.bin),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(REPO),
            "TB_PROBE_TIMEOUT_S": "10",
            # The network preflight probes no host unless a test says which (loopback only).
            "PF_CRITICALS": "# no host: tests/fakes/cluster.py",
        }
        kept = _WINDOWS_KEPT if on_windows() else ("SYSTEMROOT", "TMPDIR")
        env.update({key: os.environ[key] for key in kept if key in os.environ})
        if on_windows():
            env["USERPROFILE"] = str(self.home)
            system32 = Path(os.environ.get("SYSTEMROOT", r"C:\Windows")) / "System32"
            env["TRACEBLOC_ICACLS"] = str(system32 / "icacls.exe")
        env.update(extra)
        return env

    def run(
        self, *args: str, timeout: float = 60, input: str | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        env = self.env(**extra)
        if in_process(env):
            return inprocess.run(args, env=env, cwd=self.root, input=input, timeout=timeout)
        return subprocess.run(
            [*installer_command(), *args],
            env=env,
            cwd=self.root,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        """The CLI as a running process (for interrupting it); stdin is closed."""
        return subprocess.Popen(
            [*installer_command(), *args],
            env=self.env(**extra),
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run_json(self, *args: str, **extra: str) -> dict[str, Any]:
        result = self.run(*args, "--json", **extra)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)
