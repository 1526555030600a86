"""What the operator sees before anything changes: which cluster, which namespace, which
chart, what size and who chose it, and what is done to the kube context. Pure.

`plan` prints these lines; an interactive `install` prints the same and asks before its
first change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from installer.decide.model import Provenance, Resolution, Source

if TYPE_CHECKING:
    from installer.commands.install_plan import Plan

KEEP_CONTEXT_FLAG = "--keep-context-namespace"
KEEP_CONTEXT_VAR = "TB_SET_CONTEXT_NAMESPACE"


def _who(plan: Plan) -> str:
    training = plan.facts.training
    return f"{training.size} ({chooser(training)}; provenance {training.provenance.value})"


def context_change(plan: Plan) -> str:
    namespace = plan.cfg.probe.namespace
    if not plan.set_context_namespace:
        return f"left as it is ({KEEP_CONTEXT_FLAG} / {KEEP_CONTEXT_VAR}=0)"
    return (
        f"its default namespace becomes {namespace} (kubectl config set-context "
        f"--namespace); {KEEP_CONTEXT_FLAG} or {KEEP_CONTEXT_VAR}=0 leaves it"
    )


def target_lines(plan: Plan) -> list[str]:
    probe = plan.cfg.probe
    kube = plan.kube
    if kube is not None and kube.readable:
        context = f"{kube.context} (API server {kube.server or 'unknown'})"
    else:
        context = f"unknown ({kube.reason if kube else 'not read'})"
    verdict = plan.verdict
    installed = verdict.installed_chart if verdict else None
    chart = f"{plan.cfg.chart}, version {plan.chart_version}"
    if installed:
        chart += f" (installed: {installed})"
    lines = [
        f"  kube context:   {context}",
        f"  namespace:      {probe.namespace} (release {probe.release})",
        f"  chart:          {chart}",
        f"  training size:  {_who(plan)}",
        f"  kube context namespace: {context_change(plan)}",
    ]
    if verdict is not None:
        lines.append(f"  verdict:        {verdict.action}: {verdict.reason}")
        if verdict.dry_run is not None:
            lines.append(f"  helm dry run:   {verdict.dry_run}")
    return lines


def target_json(plan: Plan) -> dict[str, Any]:
    kube = plan.kube
    verdict = plan.verdict
    return {
        "context": kube.context if kube and kube.readable else None,
        "server": kube.server if kube and kube.readable else None,
        "namespace": plan.cfg.probe.namespace,
        "release": plan.cfg.probe.release,
        "chart": plan.cfg.chart,
        "chart_version": plan.chart_version,
        "installed_chart": verdict.installed_chart if verdict else None,
        "set_context_namespace": plan.set_context_namespace,
    }


def chooser(training: Resolution) -> str:
    return {
        Source.OVERRIDE: "chosen by you (TRACEBLOC_TRAINING_RESOURCES)",
        Source.CARRIED: "carried from the installed release"
        + (
            ", chosen by an unknown hand"
            if training.provenance is Provenance.UNKNOWN
            else f", chosen by the {training.provenance.value}"
        ),
        Source.MACHINE: "sized by the installer from the largest schedulable node",
        Source.FALLBACK: "the installer's default: no node could be measured",
    }[training.source]
