"""Why the release's client did not come up: one Diagnosis (the cause, the remedy, whether
it is definite) from a readiness Snapshot, and the container whose log is worth reading. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from installer.decide import shellquote
from installer.decide.model import Resolution
from installer.decide.readiness import Event, Pod, Snapshot, events_of, pods_of

# Causes, by name: a stable vocabulary for `--json` and for tests.
TLS = "image-pull-tls"
UNAUTHORIZED = "image-pull-unauthorized"
CREDENTIALS = "credentials-rejected"
NO_GPU = "no-gpu"
INSUFFICIENT = "insufficient-resources"
IMAGE_PULL = "image-pull"
CRASH = "crash-loop"
FAILED = "workload-failed"
NOT_READY = "not-ready"
NO_WORKLOADS = "no-workloads"

PULL_FAILURES = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
_X509 = re.compile(
    r"x509|certificate signed by unknown authority|tls: failed to verify", re.IGNORECASE
)
_UNAUTHORIZED = re.compile(
    r"unauthorized|authentication required|pull access denied|401|403 forbidden|denied:",
    re.IGNORECASE,
)
# What the jobs-manager logs when the backend refuses the client's credentials at start-up.
REJECTED = re.compile(
    r"authentication failed|unable to log ?in|invalid (client )?credentials"
    r"|credentials (were )?rejected",
    re.IGNORECASE,
)
_GPU = re.compile(r"Insufficient [a-z0-9.-]*/gpu", re.IGNORECASE)
_CPU_MEMORY = re.compile(r"Insufficient (cpu|memory)", re.IGNORECASE)

LEFT_IN_PLACE = (
    "the release is left in place: `tracebloc-installer status` shows how it is "
    "doing, `tracebloc-installer diagnose` writes a support bundle"
)


@dataclass(frozen=True)
class Diagnosis:
    cause: str
    message: str
    remedy: str
    definite: bool  # waiting longer will not help
    pod: str | None = None
    events: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Suspect:
    """A container whose log may say why it keeps stopping."""

    pod: str
    container: str


def log_suspect(snapshot: Snapshot) -> Suspect | None:
    """The first container that crash-loops: its log is the one worth reading."""
    for pod in _live_pods(snapshot):
        for c in pod.containers:
            if c.waiting == "CrashLoopBackOff" or (c.restarts and not c.ready and c.waiting):
                return Suspect(pod.name, c.name)
    return None


def diagnose(
    snapshot: Snapshot,
    *,
    namespace: str,
    training: Resolution | None = None,
    log: str = "",
    suspect: Suspect | None = None,
    target: tuple[str, ...] = (),
) -> Diagnosis | None:
    """Why the client is not up, most specific cause first; None when nothing is wrong
    that a pod shows (it is still starting, and no cause is definite). `target` is kubectl as
    the person types it, then its --kubeconfig/--context for the cluster installed into, carried into the commands the
    remedy prints, so a pasted command looks at that cluster, not the current context."""
    if not snapshot.workloads:
        return Diagnosis(
            NO_WORKLOADS,
            f"the release has no Deployment or StatefulSet in namespace {namespace}",
            "check the chart that was installed; " + LEFT_IN_PLACE,
            definite=True,
        )
    if suspect is not None:
        line = _first_match(REJECTED, log)
        if line:
            return Diagnosis(
                CREDENTIALS,
                f"the tracebloc backend rejected the client's credentials ({suspect.pod}: {line})",
                "check the client ID and password at https://ai.tracebloc.io/clients, then run "
                "tracebloc-installer again with the right ones (TRACEBLOC_CLIENT_ID, "
                f"TRACEBLOC_CLIENT_PASSWORD)\n{LEFT_IN_PLACE}",
                definite=True,
                pod=suspect.pod,
            )
    found = [
        d
        for pod in _live_pods(snapshot)
        if (d := _pod_cause(snapshot, pod, namespace, training, target)) is not None
    ]
    for cause in (TLS, UNAUTHORIZED, NO_GPU, INSUFFICIENT, IMAGE_PULL, CRASH):
        match = next((d for d in found if d.cause == cause), None)
        if match is not None:
            return match
    failed = next((w for w in snapshot.workloads if w.failed), None)
    if failed is not None:
        return Diagnosis(
            FAILED,
            f"{failed.kind} {failed.name} failed: {failed.failed}",
            _inspect(namespace, failed.name, events_of(snapshot, failed.name), failed.kind, target),
            definite=True,
        )
    return None


def not_ready(snapshot: Snapshot, namespace: str, target: tuple[str, ...] = ()) -> Diagnosis:
    """At the deadline, with no cause named: the first workload still down, its pod and
    their last events."""
    for workload in snapshot.workloads:
        if workload.rolled_out:
            continue
        pods = [p for p in pods_of(workload, snapshot.pods) if not p.terminating]
        pod = next(
            (p for p in pods if not all(c.ready for c in p.containers if not c.init)),
            pods[0] if pods else None,
        )
        name = pod.name if pod else workload.name
        events = events_of(snapshot, name) + (events_of(snapshot, workload.name) if pod else ())
        state = _pod_state(pod) if pod else "no pod was created"
        return Diagnosis(
            NOT_READY,
            f"{workload.kind} {workload.name} is not ready "
            f"({workload.ready} of {workload.desired}): {state}",
            _inspect(namespace, name, events, "pod" if pod else workload.kind, target),
            definite=False,
            pod=name,
            events=tuple(_event_line(e) for e in events[-5:]),
        )
    return Diagnosis(NOT_READY, "the client is not ready", LEFT_IN_PLACE, definite=False)


def _live_pods(snapshot: Snapshot) -> list[Pod]:
    """Pods still meant to run: one being deleted (an old replica) says nothing of the new."""
    return [p for p in snapshot.pods if not p.terminating]


def _pod_cause(
    snapshot: Snapshot,
    pod: Pod,
    namespace: str,
    training: Resolution | None,
    target: tuple[str, ...] = (),
) -> Diagnosis | None:
    events = events_of(snapshot, pod.name)
    if pod.unschedulable or any(e.reason == "FailedScheduling" for e in events):
        said = pod.unschedulable or next(
            e.message for e in reversed(events) if e.reason == "FailedScheduling"
        )
        if _GPU.search(said):
            return Diagnosis(
                NO_GPU,
                f"pod {pod.name} asks for a GPU that no node offers: {_one_line(said)}",
                _gpu_remedy(),
                definite=True,
                pod=pod.name,
            )
        if _CPU_MEMORY.search(said):
            return Diagnosis(
                INSUFFICIENT,
                f"pod {pod.name} does not fit on any node: {_one_line(said)}",
                _size_remedy(training),
                definite=True,
                pod=pod.name,
            )
        return None
    for c in pod.containers:
        if c.waiting in PULL_FAILURES:
            said = " ".join(
                [c.message, *(e.message for e in events if e.reason in ("Failed", "BackOff"))]
            )
            if _X509.search(said):
                return Diagnosis(
                    TLS,
                    f"the cluster does not trust the certificate presented "
                    f"while pulling {c.image} (x509): a TLS-inspecting proxy "
                    "or a registry with a private CA",
                    _tls_remedy(),
                    definite=True,
                    pod=pod.name,
                )
            if _UNAUTHORIZED.search(said):
                return Diagnosis(
                    UNAUTHORIZED,
                    f"the registry refused to serve {c.image} (unauthorized)",
                    _registry_remedy(),
                    definite=True,
                    pod=pod.name,
                )
            return Diagnosis(
                IMAGE_PULL,
                f"pod {pod.name} cannot pull {c.image}: {_one_line(c.message or c.waiting)}",
                _inspect(namespace, pod.name, events, "pod", target),
                definite=c.waiting == "InvalidImageName",
                pod=pod.name,
            )
        if c.waiting == "CrashLoopBackOff":
            return Diagnosis(
                CRASH,
                f"container {c.name} of pod {pod.name} keeps stopping ({c.restarts} restarts)",
                _inspect(namespace, pod.name, events, "pod", target),
                definite=False,
                pod=pod.name,
            )
    return None


def _pod_state(pod: Pod) -> str:
    if pod.unschedulable:
        return f"pod {pod.name} is not scheduled: {_one_line(pod.unschedulable)}"
    for c in pod.containers:
        if c.waiting:
            detail = f": {_one_line(c.message)}" if c.message else ""
            return f"container {c.name} of pod {pod.name} is waiting ({c.waiting}){detail}"
    return f"pod {pod.name} is {pod.phase or 'starting'}"


def _first_match(pattern: re.Pattern[str], text: str) -> str:
    for line in text.splitlines():
        if pattern.search(line):
            return _one_line(line)
    return ""


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _event_line(event: Event) -> str:
    return f"{event.when} {event.type} {event.reason}: {_one_line(event.message, 200)}".strip()


def _inspect(
    namespace: str,
    name: str,
    events: tuple[Event, ...],
    kind: str = "pod",
    target: tuple[str, ...] = (),
) -> str:
    """`kind` is the object `name` is: a pod, or the workload itself when it has no pod."""
    if events:
        lines = [f"last events of {name}:", *(f"  {_event_line(e)}" for e in events[-5:])]
    else:
        lines = [f"no events recorded for {name}"]
    kubectl, *flags = target or ("kubectl",)
    describe = shellquote.join([kubectl, "describe", kind.lower(), name, "-n", namespace, *flags])
    events_cmd = shellquote.join([kubectl, "get", "events", "-n", namespace, *flags])
    lines.append(f"inspect: {describe}; {events_cmd}")
    lines.append(LEFT_IN_PLACE)
    return "\n".join(lines)


def _tls_remedy() -> str:
    return (
        "give the cluster your organisation's CA: set TRACEBLOC_CA_BUNDLE to its PEM file "
        "(a local k3d cluster trusts it only when created with it: delete the cluster, "
        "then install again), or make the nodes' container runtime trust it; behind a "
        "proxy check HTTPS_PROXY and NO_PROXY, or pull through a mirror with "
        f"TRACEBLOC_IMAGE_REGISTRY\n{LEFT_IN_PLACE}"
    )


def _registry_remedy() -> str:
    return (
        "set TRACEBLOC_REGISTRY_USERNAME and TRACEBLOC_REGISTRY_PASSWORD (and "
        "TRACEBLOC_REGISTRY_SERVER for a private mirror) to an account that may pull the "
        f"image, then run tracebloc-installer again\n{LEFT_IN_PLACE}"
    )


def _gpu_remedy() -> str:
    return (
        "make the GPU visible to Kubernetes (the NVIDIA/AMD driver and device plugin on "
        "the node; `kubectl describe node` should list nvidia.com/gpu or amd.com/gpu), "
        f"or install on a node that has one\n{LEFT_IN_PLACE}"
    )


def _size_remedy(training: Resolution | None) -> str:
    if training is not None:
        sized = (
            f"the training size is {training.size} (provenance {training.provenance.value}); "
            "set TRACEBLOC_TRAINING_RESOURCES=cpu=<n>,memory=<n>Gi to a size the node can "
            "hold"
        )
    else:
        sized = "set TRACEBLOC_TRAINING_RESOURCES=cpu=<n>,memory=<n>Gi to a size the node can hold"
    return (
        f"free CPU or memory on the cluster (or give Docker more), or {sized}, then run "
        f"tracebloc-installer again\n{LEFT_IN_PLACE}"
    )
