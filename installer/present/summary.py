"""What the end of an install says: the one summary (text and `--json`), "connected" only with
the signal that was seen, and what to do next."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from installer.decide.model import KubeTarget, Resolution
from installer.edges.valuesfile import Written
from installer.present.provenance import training_words
from installer.present.question import rows, shown_path


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
    after_reboot: str = ""  # the local cluster: what brings the client back (decide/reboot.py)
    gpu: str = ""  # "verified (N …)" or "not verified: why" (commands/gpuverify.py)
    gpu_test: str = ""  # the smoke-test command: one pod asking for one GPU


def summary(
    outcome: Outcome,
    log_path: str | None,
    *,
    full: bool = True,
    status: str = "tracebloc-installer status",
    ingest: bool = False,
    width: int = 80,
    home: str = "",
) -> str:
    """The end of the run: everything seen when `full`, else the few lines for a terminal `width`
    wide. `status`: the command to paste; `ingest`: the tracebloc CLI is here."""
    if outcome.unchanged:
        notes = [f"  note: {note}" for note in outcome.notes]
        return "\n".join(filter(None, (outcome.unchanged, *notes, outcome.after_reboot)))
    training = outcome.training
    kube = outcome.kube
    ingest = ingest and not any("tracebloc data ingest" in note for note in outcome.notes)
    if not full:
        where = kube.context if kube is not None and kube.readable else "the cluster"
        files = [shown_path(outcome.values_path, home)]
        files += [shown_path(log_path, home)] if log_path else []
        lines = [f"The tracebloc client is installed and connected: {WEB_APP}"]
        folders = {os.path.dirname(f) for f in files}
        place = f"  cluster:   {where}, namespace {outcome.namespace}"
        if len(folders) == 1:  # the values file and the log side by side: one row
            lines.append(f"{place}    files: {folders.pop()}{os.sep}")
        else:
            lines += [place, f"  files:     {', '.join(files)}"]
        shown = [row for line in lines for row in rows(line, width)]
        # A note is never cut: it may be the one line that puts the CLI on PATH.
        shown += [row for note in outcome.notes for row in rows(f"  note: {note}", width, limit=10)]
        # The data step is said once: by a note that already says how, or here.
        data_said = any(
            "tracebloc data ingest" in note or "get the tracebloc CLI" in note
            for note in outcome.notes
        )
        steps = next_steps(status, ingest, short=True)
        shown += [row for line in (steps[:-1] if data_said else steps) for row in rows(line, width)]
        if outcome.after_reboot:  # hospital machines reboot for patches: never cut
            shown += rows(outcome.after_reboot, width, limit=10)
        return "\n".join(shown)
    who = training_words(training)
    lines = [
        "The tracebloc client is installed and connected.",
        f"  connected:      {CONNECTED_SIGNAL}",
        f"  kube context:   {kube.context} (API server {kube.server or 'unknown'})"
        if kube is not None and kube.readable
        else "  kube context:   unknown",
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
    lines += next_steps(status, ingest)
    if outcome.after_reboot:
        lines.append(outcome.after_reboot)
    return "\n".join(lines)


# What the engine saw before it says "connected" (commands/wait.py): nothing else.
CONNECTED_SIGNAL = (
    "every workload of the release reported ready to Kubernetes (its "
    "readiness checks passed), as the readiness wait saw it"
)


WEB_APP = "https://ai.tracebloc.io"


CLI_RELEASES = "https://github.com/tracebloc/cli/releases/latest"


def next_steps(
    status: str = "tracebloc-installer status", ingest: bool = False, short: bool = False
) -> list[str]:
    """Each line works as printed: the data step only where the tracebloc CLI is."""
    data = (
        "  tracebloc data ingest    add your data with the tracebloc CLI"
        if ingest
        else f"  add your data with the tracebloc CLI; get it from {CLI_RELEASES}"
    )
    if short:
        said = f"next: {status}    is it healthy?"
        return [said if len(said) < 80 else f"next: {status}", data]
    return [
        "next:",
        f"  {status}    check on the client",
        f"  {WEB_APP}    the client appears in the tracebloc web app",
        data,
    ]


def install_json(outcome: Outcome, log_path: str | None) -> dict[str, Any]:
    return {
        "release": outcome.release,
        "namespace": outcome.namespace,
        "training": {
            "size": outcome.training.size,
            "provenance": outcome.training.provenance.value,
            "source": outcome.training.source.value,
        },
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
        "after_reboot": outcome.after_reboot or None,
        "next": {
            "web_app": WEB_APP,
            "status": "tracebloc-installer status",
            "ingest": f"the tracebloc CLI (tracebloc data ingest), from {CLI_RELEASES}",
        },
    }
