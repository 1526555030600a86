"""`plan`: everything `install` will do, computed without changing anything.

Reads (the probe, GPU detection, the existing values file and data directory) happen here;
the decisions are the pure functions of resolve and render.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from installer.commands import credentials
from installer.commands.probe import Facts, concurrently, gather
from installer.decide import install_verdict
from installer.decide.errors import BadInput
from installer.decide.model import Gpu, KubeTarget, MachineFacts, NodeRead, ReleaseRead, os_name
from installer.decide.placement import Site, node_arch
from installer.decide.redact import Redactor
from installer.decide.render import to_yaml, values_document
from installer.decide.resolve import decide_mysql, mysql_tag
from installer.decide.settings import PlanConfig
from installer.decide.tooling import ToolChoice
from installer.edges import helm
from installer.edges.gpu import detect_gpu
from installer.edges.valuesfile import load_yaml

if TYPE_CHECKING:
    from installer.decide.localcluster_state import Local
    from installer.present.changes import Change


@dataclass(frozen=True)
class Plan:
    cfg: PlanConfig
    facts: Facts
    gpu: Gpu
    mysql: str
    mysql_reason: str
    values: dict[str, Any]
    data: bytes | None  # the exact bytes install writes; None when the caller's file is used
    argv: list[str]
    notes: list[str] = field(default_factory=list)
    local: Local | None = None  # the local k3d cluster step, when the engine considered one
    site: Site = field(default_factory=Site)
    # What `plan` adds for the operator (install shows the same before it changes anything).
    verdict: install_verdict.Verdict | None = None
    kube: KubeTarget | None = None
    set_context_namespace: bool = True
    chart_version: str = ""
    changes: tuple[Change, ...] = ()  # every change install makes, in order (present/changes.py)


def check_paths(
    cfg: PlanConfig, env: Mapping[str, str], chart_flag: str | None, variable: str | None = None
) -> None:
    """`variable`: the flag or variable to name when the data directory is refused."""
    # No --chart and not the default: the chart is TRACEBLOC_CHART_PATH, as config read it.
    if not chart_flag and not cfg.chart_is_default and not os.path.isdir(cfg.chart):
        raise BadInput(f"TRACEBLOC_CHART_PATH={cfg.chart!r} is not a chart directory")
    if cfg.values_given and not os.path.lexists(cfg.values_path):
        raise BadInput(f"TRACEBLOC_VALUES_FILE={cfg.values_path!r} does not exist")
    if cfg.values_given and not os.path.isfile(cfg.values_path):
        raise BadInput(f"TRACEBLOC_VALUES_FILE={cfg.values_path!r} is not a regular file")
    # Before anything changes, and in plan too: plan refuses what install would refuse.
    from installer.edges import hostdirs

    for warning in hostdirs.check(
        env,
        os_name(sys.platform),
        cfg.host_data_dir,
        cfg.host_dataset_dir,
        cfg.storage_mode,
        variable=variable,
    ):
        logging.getLogger("installer").warning("%s", warning)


def make_plan(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor | None = None,
    release: ReleaseRead | None = None,
    machine: MachineFacts | None = None,
    local: Local | None = None,
    tool_choices: Mapping[str, ToolChoice] | None = None,
    nodes: NodeRead | None = None,
    gpu: Gpu | None = None,
    kube: KubeTarget | None = None,
) -> Plan:
    """Reads passed in (`release`, `machine`, `nodes`, `gpu`) are used as they are."""
    os_ = os_name(sys.platform)
    machine = local.machine if local is not None else machine
    if gpu is None:
        with concurrently(1) as pool:
            gpu_future = pool.submit(detect_gpu, env, os_, timeout=cfg.probe.timeout)
            facts = gather(
                cfg.probe, env, redactor, release, machine, tool_choices, nodes, sizing_only=False
            )
            gpu = gpu_future.result()
    else:
        facts = gather(
            cfg.probe, env, redactor, release, machine, tool_choices, nodes, sizing_only=False
        )
    notes = list(cfg.probe.notes)
    if local is not None and local.managed and local.docker is not None:
        # The engine's k3d cluster: a GPU only where the cluster has (or is made with) it.
        notes += list(local.gpu_notes)
        if gpu.vendor == "amd":
            # k3d passes no AMD device (/dev/kfd, /dev/dri) to its nodes, nor did the scripts'.
            notes.append(
                "this machine has an AMD GPU, but the local k3d cluster cannot give it "
                "to pods: the client installs for CPU (an AMD GPU is used on a "
                "cluster whose nodes advertise amd.com/gpu)"
            )
            gpu = Gpu(None, reason="the local cluster has no AMD GPU access")
        elif gpu.vendor == "nvidia" and not local.gpu:
            gpu = Gpu(None, reason=local.gpu_reason or "the local cluster has no GPU access")
    notes += [
        f"{name} had pasted terminal control characters; they were removed" for name in cfg.cleaned
    ]
    argv = [
        "helm",
        *helm.upgrade_install_args(
            cfg.probe.release, cfg.chart, cfg.probe.namespace, cfg.values_path, cfg.probe.conn
        ),
    ]
    if cfg.values_given:
        values = load_yaml(cfg.values_path, required=True) or {}
        return Plan(
            cfg,
            facts,
            gpu,
            mysql_tag(values) or "chart default",
            "TRACEBLOC_VALUES_FILE is used as-is",
            values,
            None,
            argv,
            notes,
            local,
        )

    from installer.commands.placement import decide_site

    site = decide_site(
        cfg, env, facts, gpu, redactor, target=kube or KubeTarget(False, reason="not read")
    )
    gpu = site.gpu.gpu
    notes += list(site.notes)
    file_tag = None
    if cfg.mysql_engine == "auto":
        file_tag = mysql_tag(load_yaml(cfg.values_path, required=False))
    data_present = any(
        _non_empty_dir(os.path.join(cfg.host_data_dir, *parts))
        for parts in (("mysql",), (cfg.probe.namespace, "mysql"))
    )
    arch, arch_from = node_arch(facts.nodes, facts.machine.arch)
    mysql, why = decide_mysql(cfg.mysql_engine, arch, file_tag, facts.release, data_present)
    if arch_from != "this machine" and why.startswith("fresh install"):
        why += " (the nodes' kubernetes.io/arch)"
    values = values_document(cfg, facts.training, facts.nodes, gpu, mysql, site)
    return Plan(cfg, facts, gpu, mysql, why, values, to_yaml(values), argv, notes, local, site)


def _non_empty_dir(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def with_saved_credentials(cfg: PlanConfig, redactor: Redactor | None) -> PlanConfig:
    """Without credentials in the environment, the pair in the previous values file: what
    `install --yes` would install with, so `plan --values-out` writes the same bytes."""
    if cfg.values_given or cfg.client_id or cfg.client_password:
        return cfg
    previous = load_yaml(cfg.values_path, required=False)
    client_id, password = credentials.previous_credentials(
        previous if isinstance(previous, dict) else None
    )
    if not (client_id and password):
        return cfg
    if redactor is not None:
        redactor.add(password)
    return dataclasses.replace(cfg, client_id=client_id, client_password=password)


def chart_version(chart: str) -> str:
    """The version a chart directory declares; a repository chart: the newest it holds."""
    if not os.path.isdir(chart):
        return "the newest in the repository"
    document = load_yaml(os.path.join(chart, "Chart.yaml"), required=False)
    version = document.get("version") if isinstance(document, dict) else None
    return str(version) if version is not None else "unknown (Chart.yaml has no version)"
