"""What the user reads: JSON documents and human text built from the facts. Pure.

Warnings are derived here from the data the resolver returned; the resolver never prints.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from installer.decide.localcluster_state import leftover_said
from installer.decide.model import (
    NodeRead,
    ReleaseRead,
    ReleaseState,
    Resolution,
    Source,
)
from installer.decide.quantity import GIB
from installer.decide.resolve import HISTORIC_LITERAL
from installer.decide.settings import DEFAULT_REPO_NAME, DEFAULT_REPO_URL, PlanConfig
from installer.present.target import chooser
from installer.present.tools import choice_json, choice_text

if TYPE_CHECKING:
    # Only `plan` needs rendering (and YAML): `probe` imports neither.
    from installer.commands.install_plan import Plan
    from installer.commands.probe import Facts
    from installer.decide.localcluster_state import Local


def cluster_json(nodes: NodeRead, anchor: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "readable": nodes.readable,
        "skipped": nodes.skipped,
        "nodes": [
            {
                "name": n.name,
                "cpu_millicores": n.cpu_millicores,
                "memory_bytes": n.memory_bytes,
                "schedulable": n.schedulable,
                "parsed": n.parsed,
                **({"reason": n.reason} if n.reason else {}),
            }
            for n in nodes.nodes
        ],
        "anchor": anchor,
    }
    if nodes.reason:
        out["reason"] = nodes.reason
    return out


def release_json(release: ReleaseRead) -> dict[str, Any]:
    out = {"name": release.name, "namespace": release.namespace, "state": release.state.value}
    if release.reason:
        out["reason"] = release.reason
    return out


def training_json(training: Resolution) -> dict[str, Any]:
    return {
        "size": training.size,
        "provenance": training.provenance.value,
        "source": training.source.value,
        "undersized": training.undersized,
        "unschedulable": training.unschedulable,
    }


def probe_json(facts: Facts) -> dict[str, Any]:
    return {
        "machine": asdict(facts.machine),
        "tools": {name: choice_json(choice) for name, choice in facts.tools.items()},
        "cluster": cluster_json(facts.nodes, facts.training.anchor),
        "release": release_json(facts.release),
        "training": training_json(facts.training),
        "warnings": warnings(facts),
    }


def warnings(facts: Facts) -> list[str]:
    out = [problem for problem in facts.tool_problems.values()]
    nodes, release, training = facts.nodes, facts.release, facts.training
    if not nodes.readable and not nodes.skipped:
        out.append(
            f"the cluster's nodes could not be read ({nodes.reason}); nothing is said "
            f"about its size and the default {HISTORIC_LITERAL} is used"
        )
    elif training.source is Source.FALLBACK and not nodes.skipped:
        out.append(
            "no schedulable node with a readable size was found; "
            f"the default {HISTORIC_LITERAL} is used"
        )
    if release.state is ReleaseState.UNREADABLE:
        out.append(
            f"the installed release could not be read ({release.reason}); an install "
            "would refuse to change it until it can be read"
        )
    return out + sizing_warnings(facts)


def sizing_warnings(facts: Facts) -> list[str]:
    """A training envelope too small to be useful, or to schedule at all: `plan`, `probe`
    and `install` say it alike."""
    out = []
    anchor = _anchor(facts)
    training = facts.training
    if training.undersized and anchor:
        out.append(
            f"node {anchor} is small: after the platform's overhead only "
            f"{training.size} is left, below the 1 core / 2 GiB a run needs to be useful"
        )
    if training.unschedulable and anchor:
        out.append(
            f"node {anchor} is too small: after the platform's overhead not even 1 core "
            f"and 1 GiB are left; training jobs will not schedule there"
        )
    return out


def _anchor(facts: Facts) -> str | None:
    anchor = facts.training.anchor
    node = next((n for n in facts.nodes.nodes if n.name == anchor), None)
    if node is None:
        return None
    cpu = (node.cpu_millicores or 0) / 1000
    mem = (node.memory_bytes or 0) / GIB
    return f"{node.name} ({cpu:g} CPU, {mem:.1f} GiB allocatable)"


def probe_text(facts: Facts) -> str:
    m, nodes, release, t = facts.machine, facts.nodes, facts.release, facts.training
    head = f"machine:  {m.os} {m.arch}{' (WSL)' if m.wsl else ''}, "
    if m.budget == "docker":
        # Docker's budget and the host's memory are two measures: free is the host's, so it
        # is shown beside the host's total, never beside the budget's.
        host = m.host_memory_bytes
        memory = (
            f"{m.cpu_count} CPUs and {m.memory_total_bytes / GIB:.1f} GiB memory "
            "(Docker's budget: what the pods get); host memory: "
            + (f"{host / GIB:.1f} GiB total, " if host else "")
            + f"{m.memory_available_bytes / GIB:.1f} GiB free"
        )
    else:
        memory = (
            f"{m.cpu_count} CPUs, {m.memory_total_bytes / GIB:.1f} GiB memory "
            f"({m.memory_available_bytes / GIB:.1f} GiB free)"
        )
    lines = [head + memory]
    if nodes.skipped:
        lines.append("cluster:  not read (the size was chosen by TRACEBLOC_TRAINING_RESOURCES)")
    elif not nodes.readable:
        lines.append(f"cluster:  unreadable: {nodes.reason}")
    else:
        lines.append(f"cluster:  {len(nodes.nodes)} node(s), {nodes.schedulable_count} schedulable")
        for n in nodes.nodes:
            mark = "*" if n.name == t.anchor else " "
            if n.parsed:
                size = (
                    f"{(n.cpu_millicores or 0) / 1000:g} CPU, {(n.memory_bytes or 0) / GIB:.1f} GiB"
                )
            else:
                size = f"skipped: {n.reason}"
            cordon = "" if n.schedulable else " (cordoned)"
            lines.append(f"        {mark} {n.name}: {size}{cordon}")
    for index, choice in enumerate(facts.tools.values()):
        lines.append(("tools:    " if index == 0 else "          ") + choice_text(choice))
    state = release.state.value + (f": {release.reason}" if release.reason else "")
    lines.append(f"release:  {release.name} in namespace {release.namespace}: {state}")
    lines.append(f"training: {t.size} ({chooser(t)}; provenance {t.provenance.value})")
    lines += [f"warning:  {w}" for w in warnings(facts)]
    return "\n".join(lines)


def helm_json(argv: list[str], cfg: PlanConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"argv": argv}
    if cfg.chart_is_default:
        out["repo"] = {"name": DEFAULT_REPO_NAME, "url": DEFAULT_REPO_URL}
    return out


def verdict_json(plan: Plan) -> dict[str, Any] | None:
    verdict = plan.verdict
    if verdict is None:
        return None
    out: dict[str, Any] = {
        "action": verdict.action,
        "reason": verdict.reason,
        "exit": verdict.exit_code,
    }
    if verdict.error is not None and verdict.error.remedy:
        out["remedy"] = verdict.error.remedy
    if verdict.recovery:
        out["recovery"] = {"status": verdict.status, "verb": verdict.recovery}
    if verdict.dry_run is not None:
        out["dry_run"] = verdict.dry_run
    return out


def plan_json(plan: Plan) -> dict[str, Any]:
    from installer.decide.render import missing_credentials, redacted
    from installer.present.target import target_json

    facts = plan.facts
    return {
        "verdict": verdict_json(plan),
        "target": target_json(plan),
        "training": training_json(facts.training),
        "release": release_json(facts.release),
        "cluster": cluster_json(facts.nodes, facts.training.anchor),
        "machine": asdict(facts.machine),
        "tools": {name: choice_json(choice) for name, choice in facts.tools.items()},
        "values": redacted(plan.values),
        "values_path": plan.cfg.values_path,
        "missing": missing_credentials(plan.values),
        "mysql": {"engine": plan.mysql, "reason": plan.mysql_reason},
        "gpu": {"vendor": plan.gpu.vendor, "reason": plan.site.gpu.source},
        "site": {"local": plan.site.where.local, "evidence": plan.site.where.evidence},
        "helm": helm_json(plan.argv, plan.cfg),
        "local_cluster": local_json(plan),
        "changes": [{"argv": list(c.argv), "why": c.why} for c in plan.changes],
        "warnings": warnings(facts) + plan.notes,
    }


def runtime_lines(plan: Any) -> list[str]:
    from installer.decide.runtime import plan_lines

    return plan_lines(plan)


def local_json(plan: Plan) -> dict[str, Any] | None:
    local = plan.local
    if local is None:
        return None
    docker = local.docker
    return {
        "managed": local.decision.manage,
        "reason": local.decision.reason,
        "name": local.settings.name if local.settings else None,
        "action": local.action,
        "docker": None
        if docker is None
        else {
            "state": docker.state,
            "memory_bytes": docker.memory_bytes,
            "cpus": docker.cpus,
            "nvidia_runtime": docker.nvidia,
            **({"reason": docker.reason} if docker.reason else {}),
        },
        "gpu": local.gpu,
        "leftovers": list(local.leftovers),
        "leftover_choice": leftover_choice(local, plan.cfg.host_data_dir)
        if local.leftovers
        else None,
        "drift": [
            {"level": d.level, "message": d.message, "remedy": d.remedy} for d in local.drift
        ],
        "problems": [{"message": m, "remedy": r} for m, r in local.problems],
        "commands": [list(argv) for argv in local.commands],
        "if_gpu_check_fails": [list(argv) for argv in local.fallback],
        "runtime": None
        if local.runtime is None
        else {
            "tier": local.runtime.tier,
            "reason": local.runtime.reason,
            "commands": runtime_lines(local.runtime),
            "grant_user": local.runtime.grant_user or None,
        },
        "gpu_host": None
        if local.gpu_host is None
        else {"reason": local.gpu_host.reason, "commands": runtime_lines(local.gpu_host)},
        "gpu_notes": list(local.gpu_notes),
    }


def leftover_choice(local: Local, data_dir: str) -> str:
    s = local.settings
    return leftover_said(
        s.leftover_action if s else None,
        data_dir,
        node_local=s is not None and s.storage_mode == "node-local",
    )


def local_text(plan: Plan) -> list[str]:
    local = plan.local
    if local is None or local.decision.manage is False:
        return []
    if local.decision.manage is None:
        return [f"local cluster: undecided: {local.decision.reason}"]
    name = local.settings.name if local.settings else "?"
    lines = [f"local cluster: {name}: {local.action or 'cannot proceed'} ({local.decision.reason})"]
    if local.docker is not None and local.docker.memory_bytes and local.docker.cpus:
        lines.append(
            f"  docker: {local.docker.cpus} CPUs, "
            f"{local.docker.memory_bytes / GIB:.1f} GiB (the budget the pods get)"
        )
    lines += [f"  problem: {m}; {r}" for m, r in local.problems]
    if local.runtime is not None and local.runtime.steps and local.runtime.refusal is None:
        lines.append(
            f"  docker: {local.runtime.reason}: set up first (after the confirmation), "
            "root commands through sudo:"
        )
        lines += [f"    {line}" for line in runtime_lines(local.runtime)]
    if local.gpu_host is not None and local.gpu_host.steps:
        lines.append(
            f"  gpu: {local.gpu_host.reason}: this machine's NVIDIA GPU set up for "
            "Docker (after the confirmation), root commands through sudo:"
        )
        lines += [f"    {line}" for line in runtime_lines(local.gpu_host)]
    lines += [f"  {d.level}: {d.message}" for d in local.drift]
    if local.leftovers:
        lines.append(f"  earlier data: {leftover_choice(local, plan.cfg.host_data_dir)}")
        lines.append("    found: " + ", ".join(local.leftovers))
    if local.commands:
        lines.append("  commands:")
        lines += ["    " + " ".join(_quote(part) for part in argv) for argv in local.commands]
    if local.fallback:
        lines.append("  instead, if Docker's GPU check fails:")
        lines += ["    " + " ".join(_quote(part) for part in argv) for argv in local.fallback]
    return lines


def plan_text(plan: Plan) -> str:
    from installer.decide.render import missing_credentials, redacted, to_yaml
    from installer.present.target import target_lines

    lines = [probe_text(plan.facts)]
    lines += local_text(plan)
    lines += [f"notice:   {note}" for note in plan.notes]
    missing = missing_credentials(plan.values)
    if missing:
        lines.append(
            f"missing:  {', '.join(missing)} (set TRACEBLOC_CLIENT_ID and "
            "TRACEBLOC_CLIENT_PASSWORD before installing)"
        )
    lines.append(f"mysql:    {plan.mysql} ({plan.mysql_reason})")
    where = plan.site.where
    lines.append(
        "site:     "
        + {
            True: "the cluster runs on this machine",
            False: "the cluster does not run (only) here",
            None: "unknown",
        }[where.local]
        + f" ({where.evidence})"
    )
    lines.append(f"gpu:      {plan.gpu.vendor or 'none'} ({plan.site.gpu.source})")
    lines.append(f"values ({plan.cfg.values_path}, secrets masked):")
    dumped = to_yaml(redacted(plan.values)).decode("utf-8")
    lines += ["  " + line for line in dumped.rstrip("\n").splitlines()]
    if plan.cfg.chart_is_default:
        lines.append(f"helm repository: helm repo add {DEFAULT_REPO_NAME} {DEFAULT_REPO_URL}")
    lines.append("helm command:")
    lines.append("  " + " ".join(_quote(part) for part in plan.argv))
    lines.append("target (what install changes):")
    lines += target_lines(plan)
    if plan.changes:
        from installer.present import changes

        lines.append("changes install makes after its one question, in order:")
        lines += changes.text(plan.changes, changes.downloads(plan.facts.tools))
    if plan.verdict is not None and plan.verdict.error is not None:
        lines += ["  " + line for line in plan.verdict.error.remedy.splitlines()]
    return "\n".join(lines)


def _quote(part: str) -> str:
    return part if part and all(c.isalnum() or c in "-_./:=,@\\" for c in part) else repr(part)
