"""The install record: where the last successful install put the client, so later commands
find it without options. Pure: its shape, its bytes, and whether a run follows it. It holds
no secret, only where and how (release, namespace, context, chart, data dir, credential source).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, fields

from installer.decide.settings import RESERVED_NAMESPACES

RECORD_FILE = "install.json"
VERSION = 1
# A namespace and release name as `-n` accepts them: a DNS-1123 label Helm takes as a release.
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?")


@dataclass(frozen=True)
class Record:
    release: str
    namespace: str
    context: str
    server: str
    chart: str
    chart_version: str
    data_dir: str
    credentials: str  # environment | prompt | values file | sign-in | TRACEBLOC_VALUES_FILE
    kubeconfig: str = ""  # the --kubeconfig the install was given ("": the usual files)


def dump(record: Record) -> bytes:
    return (
        json.dumps({"version": VERSION, **asdict(record)}, indent=2, sort_keys=True) + "\n"
    ).encode("utf-8")


def parse(data: bytes) -> Record:
    """Raises ValueError when the bytes are not a record this engine wrote."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError("it is not JSON") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ValueError(f"it is not a version {VERSION} install record")
    values = {
        f.name: doc.get(f.name, f.default if isinstance(f.default, str) else None)
        for f in fields(Record)
    }
    if not all(isinstance(v, str) for v in values.values()) or not values["namespace"]:
        raise ValueError("a field is missing or not text")
    for key in ("namespace", "release"):
        name = str(values[key])
        if not _NAME.fullmatch(name):
            raise ValueError(f"its {key} {name[:60]!r} is not a DNS-1123 label")
        if name in RESERVED_NAMESPACES:
            raise ValueError(f"it names {key} {name!r}, which the client may not use")
    return Record(**values)  # type: ignore[arg-type]


def followed_line(record: Record, path: str) -> str:
    return (
        f"using the install record {path}: release {record.release} in namespace "
        f"{record.namespace}, kube context {record.context or '(current)'} "
        "(-n, --context or --kubeconfig override it)"
    )


def stale_line(record: Record, path: str, found_server: str) -> str:
    now = f"now points at {found_server}" if found_server else "no longer exists"
    return (
        f"the install record {path} names kube context {record.context} (API server "
        f"{record.server}), which {now}: not followed; name the cluster with --context "
        f"or --kubeconfig and the namespace with -n {record.namespace}"
    )
