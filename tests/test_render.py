"""The values document: golden files for representative machines, and its rules.

Each golden case is built the way `plan` builds it, from plain inputs: an explicit
environment through `probe_config`/`plan_config`, the nodes through `kubectl.parse_nodes`,
the size through `resolve_training`, the engine through `decide_mysql`. The rendered bytes
must equal tests/golden/<case>.yaml exactly. `REGEN_GOLDEN=1 pytest tests/test_render.py`
rewrites the files; review the diff against issue 3 before keeping it. The expectations in
each case (size, SINGLE_NODE, engine) are stated separately, so a regenerated golden cannot
quietly bless a wrong answer.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from installer.config import plan_config, probe_config
from installer.decide.model import Gpu, KubeTarget, NodeRead, ReleaseRead, ReleaseState
from installer.decide.placement import Plugins, Site, locality, plan_gpu, single_node
from installer.decide.redact import MASK
from installer.decide.render import missing_credentials, redacted, to_yaml, values_document
from installer.decide.resolve import decide_mysql, resolve_training
from installer.edges.kubectl import parse_nodes
from tests.fakes.cluster import node, nodes_json

GOLDEN = Path(__file__).resolve().parent / "golden"
ABSENT = ReleaseRead("tracebloc", "tracebloc", ReleaseState.ABSENT)
CREDENTIALS = {"TRACEBLOC_CLIENT_ID": "client-7f3a", "TRACEBLOC_CLIENT_PASSWORD": "s3cr3t pass"}

# Issue 3: "Keys, and only these".
TOP_LEVEL_KEYS = {
    "env",
    "clientId",
    "clientPassword",
    "storageClass",
    "hostPath",
    "singleNode",
    "pvc",
    "pvcAccessMode",
    "clusterScope",
    "images",
    "gpu",
    "global",
    "dockerRegistry",
}
ENV_KEYS = {
    "RESOURCE_LIMITS",
    "RESOURCE_REQUESTS",
    "RESOURCE_PROVENANCE",
    "CLIENT_ENV",
    "HTTP_PROXY_HOST",
    "HTTP_PROXY_PORT",
    "HTTP_PROXY_USERNAME",
    "HTTP_PROXY_PASSWORD",
    "NO_PROXY",
    "GPU_LIMITS",
    "GPU_REQUESTS",
    "RUNTIME_CLASS_NAME",
    "SINGLE_NODE",
    "GPU_VISIBLE_DEVICES",
    "HOST_UID",
    "HOST_GID",
}


@dataclass(frozen=True)
class Machine:
    env: dict[str, str]
    kubectl_out: bytes
    arch: str = "x86_64"
    gpu: str | None = None
    # Hand-checked expectations, independent of the golden bytes.
    size: str = ""
    single_node: str | None = None
    mysql: str = "5.7"
    extra: dict[str, Any] = field(default_factory=dict)
    # What `kubectl config view --minify` shows: (context, API server).
    view: tuple[str, str] = ("default", "https://10.0.0.5:6443")


def nodes_out(*items: dict[str, Any]) -> bytes:
    return nodes_json(*items).encode()


CASES = {
    "laptop": Machine(
        env={"HOME": "/home/ana", **CREDENTIALS},
        kubectl_out=nodes_out(node("docker-desktop", "8", "16Gi")),
        size="cpu=7,memory=13Gi",
        single_node="true",
        view=("docker-desktop", "https://kubernetes.docker.internal:6443"),
    ),
    "wsl2-box": Machine(
        env={"HOME": "/home/ana", "WSL_DISTRO_NAME": "Ubuntu", **CREDENTIALS},
        # ~4 CPU / 7.6 GiB: what a default WSL2 VM on a 16 GiB laptop reports.
        kubectl_out=nodes_out(node("ana-pc", "4", "7969204Ki")),
        gpu="nvidia",
        size="cpu=3,memory=4Gi",
        single_node="true",
        view=("default", "https://127.0.0.1:6443"),
    ),
    "eks-multi-node": Machine(
        env={"HOME": "/home/ci", "CLIENT_ENV": "production", **CREDENTIALS},
        kubectl_out=nodes_out(
            node("ip-10-0-1-17.ec2.internal", "3920m", "15136960Ki"),
            node("ip-10-0-2-41.ec2.internal", "3920m", "15136960Ki"),
            node("ip-10-0-3-88.ec2.internal", "3920m", "15136960Ki"),
            # The biggest node is cordoned: it must neither anchor the size nor count.
            node("ip-10-0-4-9.ec2.internal", "7910m", "31733248Ki", unschedulable=True),
        ),
        size="cpu=2,memory=11Gi",
        single_node=None,
        extra={"CLIENT_ENV": "prod"},
        view=("arn:aws:eks:eu-west-1:1:cluster/ml", "https://AB12.gr7.eu-west-1.eks.amazonaws.com"),
    ),
    "proxy-with-credentials": Machine(
        env={
            "HOME": "/home/ana",
            "CLIENT_ENV": "staging",
            # The first set of HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy wins.
            "HTTPS_PROXY": "http://ana:p@ss:w0rd@proxy.corp.example:3128/",
            "https_proxy": "http://other:other@ignored.example:8080",
            "NO_PROXY": "localhost,127.0.0.1,.svc,.cluster.local",
            **CREDENTIALS,
        },
        kubectl_out=nodes_out(node("k3s-server", "8", "32Gi")),
        size="cpu=7,memory=29Gi",
        single_node=None,
        extra={"HTTP_PROXY_PASSWORD": "p@ss:w0rd", "CLIENT_ENV": "stg"},
    ),
    "mirror-with-credentials": Machine(
        env={
            "HOME": "/home/ana",
            "TRACEBLOC_IMAGE_REGISTRY": "https://mirror.corp.example:5000/",
            "TRACEBLOC_REGISTRY_USERNAME": "robot$tracebloc",
            "TRACEBLOC_REGISTRY_PASSWORD": "reg#pa:ss",
            **CREDENTIALS,
        },
        kubectl_out=nodes_out(node("worker-a", "16", "64Gi"), node("worker-b", "16", "64Gi")),
        size="cpu=15,memory=61Gi",
        single_node=None,
        extra={"server": "https://mirror.corp.example:5000"},
    ),
    "node-local-cluster-unreadable": Machine(
        # No credentials either: the document simply lacks clientId/clientPassword.
        env={"HOME": "/home/ana", "TB_STORAGE_MODE": "node-local"},
        kubectl_out=b"error: You must be logged in to the server (Unauthorized)\n",
        size="cpu=2,memory=8Gi",
        # node-local says where the volumes live, not where the cluster is: with an API
        # server at another address (the default view, 10.0.0.5) it is not one host here.
        single_node=None,
    ),
    "arm64-fresh-8.4": Machine(
        env={"HOME": "/Users/ana", **CREDENTIALS},
        kubectl_out=nodes_out(node("docker-desktop", "10", "8025424Ki")),
        arch="arm64",
        size="cpu=9,memory=4Gi",
        single_node="true",
        mysql="8.4",
        view=("docker-desktop", "https://kubernetes.docker.internal:6443"),
    ),
}


def build(case: Machine) -> tuple[dict[str, Any], str]:
    cfg = plan_config(case.env, probe_config(case.env), os_="linux")
    nodes = parse_nodes(case.kubectl_out)
    training = resolve_training(cfg.probe.override, ABSENT, nodes)
    mysql, _ = decide_mysql(cfg.mysql_engine, case.arch, None, ABSENT, False)
    where = locality(KubeTarget(True, *case.view), nodes, cfg.storage_mode)
    env_single, top_single = single_node(where, nodes, cfg.storage_mode)
    gpu = plan_gpu(nodes, where, Gpu(case.gpu), False, Plugins(True), {}, "tracebloc", "tracebloc")
    site = Site(env_single, top_single, gpu, where=where)
    return values_document(cfg, training, nodes, gpu.gpu, mysql, site), mysql


@pytest.mark.parametrize("name", list(CASES))
def test_values_document_matches_golden(name: str) -> None:
    data = to_yaml(build(CASES[name])[0])
    golden = GOLDEN / f"{name}.yaml"
    if os.environ.get("REGEN_GOLDEN") == "1":
        golden.write_bytes(data)
    assert golden.exists(), f"{golden} is missing: run with REGEN_GOLDEN=1 and review it"
    expected = golden.read_bytes()
    if data != expected:
        diff = difflib.unified_diff(
            expected.decode().splitlines(),
            data.decode().splitlines(),
            "golden",
            "rendered",
            lineterm="",
        )
        pytest.fail("rendered values differ from the golden file:\n" + "\n".join(diff))


@pytest.mark.parametrize("name", list(CASES))
def test_values_document_follows_issue_rules(name: str) -> None:
    case = CASES[name]
    doc, mysql = build(case)
    env = doc["env"]
    # Only the listed keys: chart defaults (image tags, digests, replicas) stay the chart's.
    assert set(doc) <= TOP_LEVEL_KEYS
    assert set(env) <= ENV_KEYS
    assert all(isinstance(value, str) for value in env.values())
    assert env["RESOURCE_LIMITS"] == env["RESOURCE_REQUESTS"] == case.size
    assert env["RESOURCE_PROVENANCE"] == "installer"
    assert env.get("SINGLE_NODE") == case.single_node
    assert env["RUNTIME_CLASS_NAME"] == ""
    assert ("NO_PROXY" in env) == ("HTTP_PROXY_HOST" in env) == ("HTTPS_PROXY" in case.env)
    assert env.get("CLIENT_ENV") == case.extra.get("CLIENT_ENV")
    assert mysql == case.mysql
    if mysql == "8.4":
        assert doc["images"] == {"mysqlClient": {"tag": "8.4", "digest": ""}}
    else:
        assert "images" not in doc
    assert doc["pvc"] == {"mysql": "2Gi", "logs": "10Gi", "data": "50Gi"}
    assert doc["pvcAccessMode"] == "ReadWriteOnce"
    assert doc["clusterScope"] is True
    assert missing_credentials(doc) == (
        [] if "TRACEBLOC_CLIENT_ID" in case.env else ["clientId", "clientPassword"]
    )
    if "HTTP_PROXY_PASSWORD" in case.extra:
        assert env["HTTP_PROXY_HOST"] == "proxy.corp.example"
        assert env["HTTP_PROXY_PORT"] == "3128"
        assert env["HTTP_PROXY_USERNAME"] == "ana"
        assert env["HTTP_PROXY_PASSWORD"] == case.extra["HTTP_PROXY_PASSWORD"]
    if "server" in case.extra:
        assert doc["global"] == {"imageRegistry": "mirror.corp.example:5000"}
        assert doc["dockerRegistry"]["server"] == case.extra["server"]
    # The golden file parses back to the same document.
    assert yaml.safe_load((GOLDEN / f"{name}.yaml").read_bytes()) == doc


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        pytest.param(
            "hostpath",
            {
                "storageClass": {
                    "create": True,
                    "name": "client-storage-class",
                    "provisioner": "manual",
                    "allowVolumeExpansion": True,
                    "parameters": {},
                },
                "hostPath": {"enabled": True},
            },
            id="hostpath-default",
        ),
        pytest.param(
            "node-local",
            {
                "storageClass": {"create": False, "name": "local-path"},
                "hostPath": {"enabled": False},
            },
            id="node-local",
        ),
    ],
)
def test_storage_keys(mode: str, expected: dict[str, Any]) -> None:
    env = {"HOME": "/h", "TB_STORAGE_MODE": mode}
    doc = document(env)
    assert {k: doc[k] for k in ("storageClass", "hostPath", "singleNode") if k in doc} == expected


def document(
    env: dict[str, str], nodes: NodeRead | None = None, gpu: str | None = None, mysql: str = "5.7"
) -> dict[str, Any]:
    cfg = plan_config(env, probe_config(env), os_="linux")
    nodes = nodes or parse_nodes(nodes_out(node("a", "8", "16Gi")))
    training = resolve_training(cfg.probe.override, ABSENT, nodes)
    return values_document(cfg, training, nodes, Gpu(gpu), mysql)


@pytest.mark.parametrize(
    ("vendor", "gpu_env", "device_plugin"),
    [
        pytest.param(
            "nvidia",
            "nvidia.com/gpu=1",
            {"enabled": True, "vendor": "nvidia"},
            id="nvidia-smi-lists-a-gpu",
        ),
        pytest.param("amd", "", {"enabled": True, "vendor": "amd"}, id="amd-dev-kfd"),
        pytest.param(None, "", None, id="no-gpu"),
    ],
)
def test_gpu_keys(vendor: str | None, gpu_env: str, device_plugin: dict[str, Any] | None) -> None:
    doc = document({"HOME": "/h"}, gpu=vendor)
    assert doc["env"]["GPU_LIMITS"] == doc["env"]["GPU_REQUESTS"] == gpu_env
    assert doc.get("gpu", {}).get("devicePlugin") == device_plugin
    if vendor is None:
        assert "gpu" not in doc


def test_without_site_evidence_no_single_node_key_is_written() -> None:
    # Nothing seen about the site: the chart's own default decides SINGLE_NODE.
    assert "SINGLE_NODE" not in document({"HOME": "/h"})["env"]
    assert "singleNode" not in document({"HOME": "/h", "TB_STORAGE_MODE": "node-local"})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("dev", "dev"),
        ("development", "dev"),
        ("stg", "stg"),
        ("Staging", "stg"),
        ("prod", "prod"),
        ("production", "prod"),
    ],
)
def test_client_env_is_normalised(raw: str, expected: str) -> None:
    assert document({"HOME": "/h", "CLIENT_ENV": raw})["env"]["CLIENT_ENV"] == expected


def test_client_env_absent_when_unset() -> None:
    assert "CLIENT_ENV" not in document({"HOME": "/h"})["env"]


def test_no_proxy_alone_writes_nothing() -> None:
    env = document({"HOME": "/h", "NO_PROXY": "localhost"})["env"]
    assert not {k for k in env if "PROXY" in k}


@pytest.mark.parametrize(
    ("extra", "server"),
    [
        pytest.param(
            {"TRACEBLOC_REGISTRY_SERVER": "https://auth.corp.example/v2/"},
            "https://auth.corp.example/v2/",
            id="explicit-server",
        ),
        pytest.param(
            {"TRACEBLOC_IMAGE_REGISTRY": "mirror.corp.example"},
            "https://mirror.corp.example",
            id="mirror-host",
        ),
        pytest.param({}, "https://index.docker.io/v1/", id="docker-hub"),
    ],
)
def test_registry_server(extra: dict[str, str], server: str) -> None:
    env = {
        "HOME": "/h",
        "TRACEBLOC_REGISTRY_USERNAME": "u",
        "TRACEBLOC_REGISTRY_PASSWORD": "p",
        "TRACEBLOC_REGISTRY_EMAIL": "ops@corp.example",
        **extra,
    }
    assert document(env)["dockerRegistry"] == {
        "create": True,
        "server": server,
        "username": "u",
        "password": "p",
        "email": "ops@corp.example",
    }


def test_redacted_masks_all_three_secrets() -> None:
    env = {
        "HOME": "/h",
        **CREDENTIALS,
        "TRACEBLOC_REGISTRY_USERNAME": "robot",
        "TRACEBLOC_REGISTRY_PASSWORD": "reg-secret",
        "HTTP_PROXY": "http://ana:proxy-secret@proxy:3128",
    }
    doc = document(env)
    shown = redacted(doc)
    assert shown["clientPassword"] == MASK
    assert shown["dockerRegistry"]["password"] == MASK
    assert shown["env"]["HTTP_PROXY_PASSWORD"] == MASK
    dumped = to_yaml(shown).decode()
    for secret in ("s3cr3t pass", "reg-secret", "proxy-secret"):
        assert secret not in dumped
    # Everything else is shown as is, and the original is untouched.
    assert shown["clientId"] == "client-7f3a"
    assert shown["dockerRegistry"]["username"] == "robot"
    assert shown["env"]["HTTP_PROXY_USERNAME"] == "ana"
    assert doc["clientPassword"] == "s3cr3t pass"
    assert doc["dockerRegistry"]["password"] == "reg-secret"
    assert doc["env"]["HTTP_PROXY_PASSWORD"] == "proxy-secret"


def test_redacted_adds_nothing_when_there_are_no_secrets() -> None:
    doc = document({"HOME": "/h"})
    assert redacted(doc) == doc
