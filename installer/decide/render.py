"""The Helm values document, as a plain dict, and its YAML bytes. Pure.

Only genuine per-install choices are written. Helm replays user-supplied values on every
later `--reset-then-reuse-values` upgrade, so a chart default written here (an image tag,
a digest) would freeze at today's value forever; chart defaults stay the chart's.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from installer.decide.model import Gpu, NodeRead, Resolution
from installer.decide.placement import Site
from installer.decide.redact import MASK
from installer.decide.settings import PlanConfig

# Where each secret sits in the document, for redaction.
SECRET_PATHS = (
    ("clientPassword",),
    ("dockerRegistry", "password"),
    ("env", "HTTP_PROXY_PASSWORD"),
)
CREDENTIAL_KEYS = ("clientId", "clientPassword")


def values_document(
    cfg: PlanConfig,
    training: Resolution,
    nodes: NodeRead,
    gpu: Gpu,
    mysql: str,
    site: Site | None = None,
) -> dict[str, Any]:
    """`site` holds what the cluster showed (decide/placement.py); without it nothing is claimed
    about the site, and `gpu` alone decides the GPU request with the chart's plugin on."""
    site = site or Site()
    plugin = site.gpu.chart_plugin if site.gpu.vendor else bool(gpu.vendor)
    env: dict[str, str] = {
        "RESOURCE_LIMITS": training.size,
        "RESOURCE_REQUESTS": training.size,
        "RESOURCE_PROVENANCE": training.provenance.value,
        "GPU_LIMITS": "nvidia.com/gpu=1" if gpu.vendor == "nvidia" else "",
        "GPU_REQUESTS": "nvidia.com/gpu=1" if gpu.vendor == "nvidia" else "",
        "RUNTIME_CLASS_NAME": site.gpu.runtime_class,
    }
    if site.gpu.visible_devices:
        env["GPU_VISIBLE_DEVICES"] = site.gpu.visible_devices
    if cfg.client_env:
        env["CLIENT_ENV"] = cfg.client_env
    if cfg.proxy:
        env["HTTP_PROXY_HOST"] = cfg.proxy.host
        env["HTTP_PROXY_PORT"] = cfg.proxy.port
        if cfg.proxy.username:
            env["HTTP_PROXY_USERNAME"] = cfg.proxy.username
        if cfg.proxy.password:
            env["HTTP_PROXY_PASSWORD"] = cfg.proxy.password
        if cfg.no_proxy:
            env["NO_PROXY"] = cfg.no_proxy
    # "One host", said only on evidence; otherwise the chart's default decides.
    if site.single_node_env is not None:
        env["SINGLE_NODE"] = site.single_node_env
    if site.host_ids is not None:
        env["HOST_UID"], env["HOST_GID"] = (str(n) for n in site.host_ids)

    doc: dict[str, Any] = {"env": env}
    if cfg.client_id is not None:
        doc["clientId"] = cfg.client_id
    if cfg.client_password is not None:
        doc["clientPassword"] = cfg.client_password
    doc.update(storage(cfg.storage_mode))
    if site.dataset_path and doc["hostPath"].get("enabled"):
        doc["hostPath"]["datasetPath"] = site.dataset_path
    if site.single_node is not None:
        doc["singleNode"] = site.single_node
    doc["pvc"] = {"mysql": "2Gi", "logs": "10Gi", "data": "50Gi"}
    doc["pvcAccessMode"] = "ReadWriteOnce"
    doc["clusterScope"] = True
    if mysql == "8.4":
        # The one image pin we write: 8.4 is a choice, and its digest is cleared so the tag
        # is what resolves. 5.7 is the chart's default and so is left to the chart.
        doc["images"] = {"mysqlClient": {"tag": "8.4", "digest": ""}}
    if gpu.vendor and plugin:
        doc["gpu"] = {"devicePlugin": {"enabled": True, "vendor": gpu.vendor}}
    if cfg.registry.mirror:
        doc["global"] = {"imageRegistry": cfg.registry.mirror}
    if cfg.registry.username is not None:
        doc["dockerRegistry"] = {
            "create": True,
            "server": cfg.registry.server,
            "username": cfg.registry.username,
            "password": cfg.registry.password,
            "email": cfg.registry.email,
        }
    return doc


def storage(mode: str) -> dict[str, Any]:
    if mode == "node-local":
        return {
            "storageClass": {"create": False, "name": "local-path"},
            "hostPath": {"enabled": False},
        }
    return {
        "storageClass": {
            "create": True,
            "name": "client-storage-class",
            "provisioner": "manual",
            "allowVolumeExpansion": True,
            "parameters": {},
        },
        "hostPath": {"enabled": True},
    }


def missing_credentials(doc: dict[str, Any]) -> list[str]:
    return [key for key in CREDENTIAL_KEYS if key not in doc]


def redacted(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for path in SECRET_PATHS:
        node: Any = out
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(path[-1]):
            node[path[-1]] = MASK
    return out


class _Dumper(yaml.SafeDumper):
    """safe_dump with one change: a string is left unquoted only when no YAML reader could
    take it for anything but that string."""


# Plain only when every YAML reader reads a string (identifier-like, not a bool/null word);
# everything else is double-quoted.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_AMBIGUOUS = frozenset("y n yes no true false on off null".split())


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    plain = _PLAIN.fullmatch(data) is not None and data.lower() not in _AMBIGUOUS
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=None if plain else '"')


_Dumper.add_representer(str, _represent_str)


def to_yaml(doc: dict[str, Any]) -> bytes:
    """The exact bytes of the values file: what helm reads back equals what we wrote."""
    text = yaml.dump(
        doc,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=2**16,
    )
    return text.encode("utf-8")
