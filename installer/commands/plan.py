"""`plan`: everything `install` will do, computed without changing anything.

Reads (the probe, GPU detection, the existing values file and data directory) happen here;
the decisions are the pure functions of resolve and render.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from installer.commands.probe import Facts, concurrently, gather
from installer.config import PlanConfig
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import Gpu, MachineFacts, ReleaseRead, os_name
from installer.decide.render import to_yaml, values_document
from installer.decide.resolve import decide_mysql, mysql_tag
from installer.decide.site import Site, node_arch
from installer.edges import helm
from installer.edges.gpu import detect_gpu
from installer.edges.tools import ToolChoice
from installer.edges.valuesfile import read_regular
from installer.present.redact import Redactor

if TYPE_CHECKING:
    from installer.commands.localcluster import Local


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


def check_paths(cfg: PlanConfig, env: Mapping[str, str], chart_flag: str | None) -> None:
    chart_path = env.get("TRACEBLOC_CHART_PATH", "").strip()
    if chart_path and not chart_flag and not os.path.isdir(chart_path):
        raise BadInput(f"TRACEBLOC_CHART_PATH={chart_path!r} is not a chart directory")
    if cfg.values_given and not os.path.lexists(cfg.values_path):
        raise BadInput(f"TRACEBLOC_VALUES_FILE={cfg.values_path!r} does not exist")
    if cfg.values_given and not os.path.isfile(cfg.values_path):
        raise BadInput(f"TRACEBLOC_VALUES_FILE={cfg.values_path!r} is not a regular file")
    # Before anything changes, and in plan too: plan refuses what install would refuse.
    from installer.edges import hostdirs

    for warning in hostdirs.check(env, os_name(sys.platform), cfg.host_data_dir,
                                  cfg.host_dataset_dir, cfg.storage_mode):  # fmt: skip
        logging.getLogger("installer").warning("%s", warning)


def make_plan(
    cfg: PlanConfig,
    env: Mapping[str, str],
    redactor: Redactor | None = None,
    release: ReleaseRead | None = None,
    machine: MachineFacts | None = None,
    local: Local | None = None,
    tool_choices: Mapping[str, ToolChoice] | None = None,
) -> Plan:
    os_ = os_name(sys.platform)
    machine = local.machine if local is not None else machine
    with concurrently(1) as pool:
        gpu_future = pool.submit(detect_gpu, env, os_, timeout=cfg.probe.timeout)
        facts = gather(cfg.probe, env, redactor, release, machine, tool_choices,
                       sizing_only=False)  # fmt: skip
        gpu = gpu_future.result()
    notes = [f"{name} had pasted terminal control characters; they were removed"
             for name in cfg.cleaned]  # fmt: skip
    argv = [
        "helm",
        *helm.upgrade_install_args(
            cfg.probe.release, cfg.chart, cfg.probe.namespace, cfg.values_path, cfg.probe.conn
        ),
    ]
    if cfg.values_given:
        values = load_yaml(cfg.values_path, required=True) or {}
        return Plan(cfg, facts, gpu, mysql_tag(values) or "chart default",
                    "TRACEBLOC_VALUES_FILE is used as-is", values, None, argv, notes,
                    local)  # fmt: skip

    from installer.commands.site import decide_site

    site = decide_site(cfg, env, facts, gpu, redactor)
    gpu = site.gpu.gpu
    notes += list(site.notes)
    file_tag = None
    if cfg.mysql_engine == "auto":
        file_tag = mysql_tag(load_yaml(cfg.values_path, required=False))
    data_present = any(_non_empty_dir(os.path.join(cfg.host_data_dir, *parts))
                       for parts in (("mysql",), (cfg.probe.namespace, "mysql")))  # fmt: skip
    arch, arch_from = node_arch(facts.nodes, facts.machine.arch)
    mysql, why = decide_mysql(cfg.mysql_engine, arch, file_tag, facts.release,
                              data_present)  # fmt: skip
    if arch_from != "this machine" and why.startswith("fresh install"):
        why += " (the nodes' kubernetes.io/arch)"
    values = values_document(cfg, facts.training, facts.nodes, gpu, mysql, site)
    return Plan(cfg, facts, gpu, mysql, why, values, to_yaml(values), argv, notes, local,
                site)  # fmt: skip


def load_yaml(path: str, *, required: bool) -> Any:
    data = read_regular(path)  # a regular file or nothing: a FIFO or a device is an error
    if data is None:
        if required:
            raise BadInput(f"{path} does not exist")
        return None
    try:
        return yaml.safe_load(data)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InstallerError(
            f"{path} is not valid YAML{where}",
            "fix or move it aside; or set TB_MYSQL_ENGINE so the engine need not be read from it",
        ) from None


def _non_empty_dir(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return False
