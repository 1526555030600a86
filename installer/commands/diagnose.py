"""`diagnose`: one support bundle, every secret masked, bounded in time and in size.

Each step on its own (a failure leaves a note): status, probe, plan, helm status/history,
pod states and events, log tails, the install log and the redacted values file. Every byte
passes the redactor.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from installer import __version__
from installer.commands.status import gather_status
from installer.commands.tools import resolve_tool
from installer.decide import yamldoc
from installer.decide.errors import InstallerError
from installer.decide.model import Connection, ReleaseState, os_name
from installer.decide.redact import MASK, Redactor
from installer.decide.render import SECRET_PATHS
from installer.decide.settings import PlanConfig, ProbeConfig
from installer.decide.status import Status
from installer.edges import bundle, childio, helm, proc, workloads
from installer.edges.valuesfile import MAX_VALUES_BYTES

BUDGET_S = 120.0  # the whole collection; a step that would start later is skipped
FILE_BYTES = 2 * 1024 * 1024  # each file keeps at most its last 2 MiB
BUNDLE_BYTES = 32 * 1024 * 1024  # past this, further files are left out
LOG_LINES = 200
LOG_BYTES = 256 * 1024
MAX_PODS = 20
_SECRET_WORDS = ("password", "secret", "token")


@dataclass
class Collected:
    files: list[tuple[str, bytes]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    size: int = 0


@dataclass(frozen=True)
class Written:
    path: str
    files: tuple[str, ...]
    notes: tuple[str, ...]


def collect(
    probe_cfg: ProbeConfig,
    plan_cfg: PlanConfig | None,
    plan_error: str,
    env: Mapping[str, str],
    redactor: Redactor,
    *,
    data_dir: str,
    clock: Callable[[], float] = time.monotonic,
) -> Written:
    deadline = clock() + BUDGET_S
    out = Collected()
    values_path = plan_cfg.values_path if plan_cfg else os.path.join(data_dir, "values.yaml")

    # Secrets first, before anything is read that could echo them.
    values_doc, values_note = _load_values(values_path)
    redactor.add(*_secrets_in(values_doc))

    def add(name: str, text: str | bytes) -> None:
        raw = text if isinstance(text, bytes) else text.encode("utf-8", "replace")
        data = redactor(childio.decode(raw)).encode("utf-8")
        if len(data) > FILE_BYTES:
            data = b"[... earlier output left out ...]\n" + data[-FILE_BYTES:]
        if out.size + len(data) > BUNDLE_BYTES:
            out.notes.append(f"{name}: left out, the bundle reached {BUNDLE_BYTES // 2**20} MiB")
            return
        out.size += len(data)
        out.files.append((name, data))

    def step(name: str, action: Callable[[], None]) -> None:
        if clock() >= deadline:
            out.notes.append(f"{name}: skipped, the {BUDGET_S:g}s budget was spent")
            return
        try:
            action()
        except InstallerError as exc:
            out.notes.append(f"{name}: {exc.message}")
        except Exception as exc:  # noqa: BLE001 - one broken step must not lose the bundle
            out.notes.append(f"{name}: failed: {exc!r}")

    def timeout() -> float:
        return max(1.0, min(probe_cfg.timeout, deadline - clock()))

    state: dict[str, Any] = {}

    def do_status() -> None:
        from installer.present.health import status_json

        status = gather_status(probe_cfg, env, redactor)
        if status.values.state is ReleaseState.PRESENT:
            redactor.add(*_secrets_in(dict(status.values.values)))
        state["status"] = status
        add("status.json", _json(status_json(status)))

    def do_probe() -> None:
        from installer.commands.probe import gather
        from installer.present import report

        status: Status | None = state.get("status")
        facts = gather(probe_cfg, env, redactor, status.values if status else None)
        add("probe.json", _json(report.probe_json(facts)))

    def do_plan() -> None:
        if plan_cfg is None:
            add("plan.json", _json({"error": plan_error}))
            return
        from installer.commands.install_plan import make_plan
        from installer.present import report

        status = state.get("status")
        plan = make_plan(plan_cfg, env, redactor, release=status.values if status else None)
        add("plan.json", _json(report.plan_json(plan)))

    def do_helm() -> None:
        tool = resolve_tool("helm", env, timeout=timeout()).tool()
        release, ns, conn = probe_cfg.release, probe_cfg.namespace, probe_cfg.conn
        for name, args in (
            ("helm-status.txt", helm.status_text_args(release, ns, conn)),
            ("helm-history.txt", helm.history_args(release, ns, conn)),
        ):
            result = proc.run(tool, args, timeout=timeout(), env=env, redactor=redactor)
            add(name, f"$ helm {' '.join(args)}\nexit {result.rc}\n{result.stdout}{result.stderr}")

    def do_pods() -> None:
        from installer.present.health import snapshot_json

        status: Status | None = state.get("status")
        if status is None or status.snapshot is None:
            reason = status.workloads.reason if status else "status was not read"
            add("pods.json", _json({"readable": False, "reason": reason}))
            return
        add("pods.json", _json(snapshot_json(status.snapshot)))
        tool = resolve_tool("kubectl", env, timeout=timeout()).tool()
        pods = status.snapshot.pods[:MAX_PODS]
        if len(status.snapshot.pods) > MAX_PODS:
            out.notes.append(f"logs: only the first {MAX_PODS} pods")
        for pod in pods:
            for c in pod.containers:
                for previous in (False, True) if c.restarts else (False,):
                    if clock() >= deadline:
                        out.notes.append("logs: the rest skipped, the budget was spent")
                        return
                    text = workloads.read_log(
                        tool,
                        pod.name,
                        c.name,
                        probe_cfg.namespace,
                        probe_cfg.conn,
                        timeout=timeout(),
                        env=env,
                        redactor=redactor,
                        lines=LOG_LINES,
                        limit=LOG_BYTES,
                        previous=previous,
                    )
                    suffix = ".previous" if previous else ""
                    add(f"logs/{pod.name}.{c.name}{suffix}.log", text or "(no log could be read)\n")

    def do_files() -> None:
        read = bundle.read_file(os.path.join(data_dir, "install.log"), FILE_BYTES, tail=True)
        if read.data is not None:
            add("install.log", read.data)
        if read.note:
            out.notes.append(f"install.log: {read.note}")
        if values_doc is not None:
            add("values.yaml", yaml.safe_dump(_masked(values_doc), sort_keys=False))
        elif values_note:
            out.notes.append(f"values.yaml: {values_note}")
        elif values_path and os.path.lexists(values_path):
            # A file we cannot parse cannot be redacted by key: it stays out.
            out.notes.append("values.yaml: left out, it is not a YAML map")

    for name, action in (
        ("status", do_status),
        ("probe", do_probe),
        ("plan", do_plan),
        ("helm", do_helm),
        ("pods", do_pods),
        ("files", do_files),
    ):
        step(name, action)
    for name, action in support_steps(env, redactor, timeout, add, probe_cfg.conn, data_dir):
        step(name, action)
    add(
        "collection.json",
        _json(
            {
                "tracebloc_installer": __version__,
                "os": sys.platform,
                "release": probe_cfg.release,
                "namespace": probe_cfg.namespace,
                "notes": out.notes,
            }
        ),
    )
    path = bundle.write(data_dir, out.files, os_name(sys.platform), env)
    return Written(path, tuple(name for name, _ in out.files), tuple(out.notes))


def support_steps(
    env: Mapping[str, str],
    redactor: Redactor,
    timeout: Callable[[], float],
    add: Callable[[str, str], None],
    conn: Connection,
    data_dir: str,
) -> list[tuple[str, Callable[[], None]]]:
    """The machine and the whole cluster, as support reads them (commands/support.py)."""
    from installer.commands import support

    return [
        ("docker", lambda: support.docker_state(env, redactor, timeout, add)),
        ("k3d", lambda: support.k3d_state(env, redactor, timeout, add)),
        ("cluster", lambda: support.cluster_state(env, redactor, timeout, add, conn)),
        ("disk", lambda: support.disk_state(env, redactor, timeout, add, data_dir)),
        ("proxy", lambda: support.proxy_state(env, add)),
    ]


def _json(document: Any) -> str:
    return json.dumps(document, indent=2, default=str) + "\n"


def _load_values(path: str) -> tuple[dict[str, Any] | None, str]:
    """The values file's map, or why it is left out ("" when it is absent or not a map)."""
    if not path:
        return None, ""
    # Read as the bundle reads, through the one loader: a broken file is left out, a bomb refused.
    read = bundle.read_file(path, MAX_VALUES_BYTES)
    if read.data is None:
        return None, "" if read.note == "not found" else read.note
    try:
        doc = yamldoc.load(read.data, path)
    except yamldoc.UnsafeYaml:
        raise
    except yamldoc.BadYaml:
        return None, ""
    return (doc, "") if isinstance(doc, dict) else (None, "")


def _secrets_in(doc: Mapping[str, Any] | None) -> list[str]:
    found = []
    for path in SECRET_PATHS:
        node: Any = doc
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, str) and node:
            found.append(node)
    return found


def _masked(value: Any, key: str = "") -> Any:
    """Every value under a key that names a password, secret or token is masked, whatever
    the chart calls it."""
    if isinstance(value, dict):
        return {k: _masked(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, key) for v in value]
    if any(word in key.lower() for word in _SECRET_WORDS) and value not in (None, ""):
        return MASK
    return value


def plan_config_or_reason(
    env: Mapping[str, str], probe_cfg: ProbeConfig
) -> tuple[PlanConfig | None, str]:
    """The plan's settings, or why they could not be made (a bundle is wanted most when
    something is wrong, so a bad setting is recorded, not fatal)."""
    from installer.config import plan_config

    try:
        cfg = plan_config(env, probe_cfg, os_=os_name(sys.platform))
    except InstallerError as exc:
        return None, exc.message
    return cfg, ""
