"""Is the release's client up? Pure decisions over one read of the namespace.

From a `Snapshot` (one `kubectl get` of workloads, pods and events) come the health problems
and the progress line; why it does not come up is decide/diagnosis.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    init: bool
    ready: bool
    waiting: str = ""  # the waiting reason (ImagePullBackOff, CrashLoopBackOff, …) or ""
    message: str = ""  # what the kubelet said about that state
    restarts: int = 0
    pulled: bool = False  # the kubelet recorded an image ID: the image is on the node


@dataclass(frozen=True)
class Pod:
    name: str
    labels: Mapping[str, str]
    images: tuple[str, ...]  # every image its spec names, init containers first
    containers: tuple[Container, ...] = ()
    phase: str = ""
    unschedulable: str = ""  # the scheduler's message while the pod cannot be placed
    terminating: bool = False


@dataclass(frozen=True)
class Workload:
    kind: str  # Deployment, StatefulSet or DaemonSet (desired: the pods it schedules)
    name: str
    desired: int
    ready: int
    rolled_out: bool  # the current spec runs on every replica it asks for
    selector: Mapping[str, str]
    failed: str = ""  # the controller gave up (a Deployment past its progress deadline)


@dataclass(frozen=True)
class Event:
    kind: str
    name: str  # of the object the event is about
    reason: str
    message: str
    type: str = "Normal"
    when: str = ""


@dataclass(frozen=True)
class Snapshot:
    workloads: tuple[Workload, ...]
    pods: tuple[Pod, ...]
    events: tuple[Event, ...] = ()

    @property
    def ready(self) -> bool:
        """Every workload rolled out; a release without workloads is not a running client."""
        return bool(self.workloads) and all(w.rolled_out for w in self.workloads)


@dataclass(frozen=True)
class DefinedRead:
    """The workloads the release's manifest defines in its own namespace, as (kind, name);
    None when the manifest could not be read (`reason` says why)."""

    workloads: tuple[tuple[str, str], ...] | None
    reason: str = ""


def health_problems(snapshot: Snapshot, defined: DefinedRead) -> tuple[str, ...]:
    """Why the release is not a healthy client, one line per workload, naming it; empty only
    on positive evidence: every workload the release defines exists, wants at least one
    replica (a DaemonSet schedules at least one pod) and is rolled out."""
    if defined.workloads is None:
        return (f"the workloads the release defines could not be read ({defined.reason})",)
    seen = {(w.kind, w.name): w for w in snapshot.workloads}
    out = [
        f"{kind} {name} is missing (the release defines it)"
        for kind, name in defined.workloads
        if (kind, name) not in seen
    ]
    if not defined.workloads and not snapshot.workloads:
        out.append("the release defines no workloads")
    for w in snapshot.workloads:
        if w.desired < 1:
            out.append(
                f"{w.kind} {w.name} "
                + ("schedules no pod" if w.kind == "DaemonSet" else "is scaled to 0 replicas")
            )
        elif not w.rolled_out:
            out.append(f"{w.kind} {w.name} is not ready ({w.ready} of {w.desired})")
    return tuple(out)


def ready_lines(snapshot: Snapshot) -> tuple[str, ...]:
    """One line per workload as seen: "Deployment tracebloc-jobs-manager 1/1"."""
    return tuple(f"{w.kind} {w.name} {w.ready}/{w.desired}" for w in snapshot.workloads)


def pods_of(workload: Workload, pods: tuple[Pod, ...]) -> tuple[Pod, ...]:
    """The pods the workload's selector picks (an empty selector picks nothing)."""
    if not workload.selector:
        return ()
    return tuple(p for p in pods if all(p.labels.get(k) == v for k, v in workload.selector.items()))


def events_of(snapshot: Snapshot, name: str) -> tuple[Event, ...]:
    return tuple(e for e in snapshot.events if e.name == name)


# --- progress --------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    ready: int
    total: int
    images_ready: int
    images_total: int
    pulling: str | None = None


def progress(snapshot: Snapshot) -> Progress:
    images: list[str] = []
    for pod in snapshot.pods:
        images += [i for i in pod.images if i not in images]
    # An image is ready once a kubelet has it: a container status with an image ID, or a
    # "Pulled" event (which also covers an image that was already present on the node).
    present = {c.image for p in snapshot.pods for c in p.containers if c.pulled}
    pulling: list[str] = []
    for event in snapshot.events:
        image = _event_image(event.message)
        if image is None:
            continue
        if event.reason == "Pulled":
            present.add(image)
        elif event.reason == "Pulling":
            pulling.append(image)
    waiting = [i for i in pulling if i not in present and i in images]
    return Progress(
        ready=sum(1 for w in snapshot.workloads if w.rolled_out),
        total=len(snapshot.workloads),
        images_ready=sum(1 for i in images if i in present),
        images_total=len(images),
        pulling=waiting[-1] if waiting else None,
    )


def progress_text(p: Progress) -> str:
    text = f"{p.ready} of {p.total} ready"
    if p.pulling:
        text += f" · pulling {p.pulling}"
    if p.images_total and p.images_ready < p.images_total:
        text += f" ({p.images_ready} of {p.images_total} images)"
    return text


_IMAGE_IN_EVENT = re.compile(r'image "([^"]+)"')


def _event_image(message: str) -> str | None:
    match = _IMAGE_IN_EVENT.search(message)
    return match.group(1) if match else None


# A read of the namespace's workloads: the snapshot, or why there is none.
@dataclass(frozen=True)
class SnapshotRead:
    snapshot: Snapshot | None
    reason: str = ""

    @property
    def readable(self) -> bool:
        return self.snapshot is not None
