"""What the end of an install says: the one summary (text and `--json`), "connected" only with
the signal that was seen, and what to do next."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from installer.decide.model import KubeTarget, Resolution
from installer.edges.valuesfile import Written
from installer.present.provenance import training_words


@dataclass(frozen=True)
class Outcome:
    release: str
    namespace: str
    training: Resolution
    values_path: str
    written: Written | None
    notes: tuple[str, ...] = ()
    kube: KubeTarget | None = None
    context_namespace: str = ""  # what was done to the kube context's default namespace
    workloads: tuple[str, ...] = ()  # each ready, as the wait last saw it
    unchanged: str = ""  # a healthy re-run: the one line saying nothing was changed
    gpu: str = ""  # "verified (N …)" or "not verified: why" (commands/gpuverify.py)
    gpu_test: str = ""  # the smoke-test command: one pod asking for one GPU


def summary(outcome: Outcome, log_path: str | None) -> str:
    if outcome.unchanged:
        return outcome.unchanged
    training = outcome.training
    who = training_words(training)
    kube = outcome.kube
    lines = [
        "The tracebloc client is installed and connected.",
        f"  connected:      {CONNECTED_SIGNAL}",
        f"  kube context:   {kube.context} (API server {kube.server or 'unknown'})"
        if kube is not None and kube.readable else "  kube context:   unknown",
        f"  namespace:      {outcome.namespace} (release {outcome.release})",
        f"  training size:  {training.size} ({who}; {training.provenance.value})",
        f"  values file:    {outcome.values_path}",
        f"  context namespace: {outcome.context_namespace}",
    ]
    lines += [f"  ready:          {w}" for w in outcome.workloads]
    if outcome.gpu:
        lines.append(f"  GPU:            {outcome.gpu}")
    if outcome.gpu_test:
        lines.append(f"  GPU test:       {outcome.gpu_test}")
    if log_path:
        lines.append(f"  log file:       {log_path}")
    lines += [f"  note: {note}" for note in outcome.notes]
    lines += next_steps()
    return "\n".join(lines)


# What the engine saw before it says "connected" (commands/wait.py): nothing else.
CONNECTED_SIGNAL = ("every workload of the release reported ready to Kubernetes (its "
                    "readiness checks passed), as the readiness wait saw it")  # fmt: skip


WEB_APP = "https://ai.tracebloc.io"


CLI_RELEASES = "https://github.com/tracebloc/cli/releases/latest"


def next_steps() -> list[str]:
    return [
        "next:",
        f"  the client appears in the tracebloc web app: {WEB_APP}",
        "  check it later:  tracebloc-installer status",
        "  then ingest your data with the tracebloc CLI (`tracebloc data ingest`); get it "
        f"from {CLI_RELEASES}",
    ]


def install_json(outcome: Outcome, log_path: str | None) -> dict[str, Any]:
    return {
        "release": outcome.release,
        "namespace": outcome.namespace,
        "training": {"size": outcome.training.size,
                     "provenance": outcome.training.provenance.value,
                     "source": outcome.training.source.value},  # fmt: skip
        "values_file": outcome.values_path,
        "context": outcome.kube.context if outcome.kube and outcome.kube.readable else None,
        "server": outcome.kube.server if outcome.kube and outcome.kube.readable else None,
        "context_namespace": outcome.context_namespace,
        "values_changed": outcome.written.changed if outcome.written else False,
        "log_file": log_path,
        "notes": list(outcome.notes),
        "connected": True,
        "connected_signal": CONNECTED_SIGNAL,
        "workloads": list(outcome.workloads),
        "gpu": {"said": outcome.gpu, "test": outcome.gpu_test} if outcome.gpu else None,
        "action": "nothing-to-change" if outcome.unchanged else "applied",
        "next": {"web_app": WEB_APP, "status": "tracebloc-installer status",
                 "ingest": f"the tracebloc CLI (tracebloc data ingest), from {CLI_RELEASES}"},
    }
