"""What we write is what helm reads: render, write, `helm template` with the REAL helm.

tests/chart is a small chart of our own that consumes every key the installer writes:
`env.*` in a ConfigMap, the credentials base64-encoded in Secrets, the storage keys in a
StorageClass and a JSON echo. Each test renders a values document through the installer's
own pipeline (config → resolve → render → write_values) and compares what helm produced
with what the user typed.
"""

from __future__ import annotations

import base64
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from installer.config import plan_config, probe_config
from installer.decide.model import Gpu, ReleaseRead, ReleaseState
from installer.decide.render import to_yaml, values_document
from installer.decide.resolve import resolve_training
from installer.edges.kubectl import parse_nodes
from installer.edges.valuesfile import write_values
from tests.fakes.cluster import REPO, node, nodes_json

pytestmark = pytest.mark.helm

CHART = REPO / "tests" / "chart"
ABSENT = ReleaseRead("tracebloc", "tracebloc", ReleaseState.ABSENT)

# Strings YAML (1.1 or 1.2) or a shell would misread if they were written unquoted.
TRICKY = [
    pytest.param('say "hi"', id="double-quotes"),
    pytest.param("it's", id="single-quote"),
    pytest.param("a:b: c", id="colons"),
    pytest.param("#not-a-comment", id="leading-hash"),
    pytest.param("pass #word", id="inner-hash"),
    pytest.param("user@host", id="at-sign"),
    pytest.param("ünïcødé ✓ 密码", id="unicode"),
    pytest.param("  leading", id="leading-spaces"),
    pytest.param("trailing  ", id="trailing-spaces"),
    pytest.param("yes", id="yaml11-bool-yes"),
    pytest.param("on", id="yaml11-bool-on"),
    pytest.param("False", id="bool-false"),
    pytest.param("null", id="null"),
    pytest.param("~", id="tilde-null"),
    pytest.param("0x10", id="hex-int"),
    pytest.param("0o17", id="yaml12-octal"),
    pytest.param("017", id="yaml11-octal"),
    pytest.param("09", id="decimal-with-leading-zero"),
    pytest.param("1_000", id="underscore-int"),
    pytest.param("1e3", id="float-exponent"),
    pytest.param("y", id="single-letter-bool"),
    pytest.param(".inf", id="infinity"),
    pytest.param("2001-12-14", id="timestamp"),
    pytest.param("=", id="yaml11-value-key"),
    pytest.param("<<", id="merge-key"),
    pytest.param("- dash", id="sequence-dash"),
    pytest.param("[a, b]", id="flow-sequence"),
    pytest.param("{a: b}", id="flow-mapping"),
    pytest.param("*alias &anchor !tag", id="yaml-indicators"),
    pytest.param("%TAG |pipe >fold `tick", id="more-indicators"),
    pytest.param("back\\slash", id="backslash"),
    pytest.param("\x7fdel\u0085nel\u00a0nbsp\u2028ls\ufeffbom", id="odd-unicode-controls"),
    pytest.param("next\u0085line", id="next-line-control"),
    pytest.param("{{ .Values.x }}", id="go-template-braces"),
]


def render(
    env: dict[str, str], *, storage_nodes: int = 1, gpu: str | None = "nvidia", mysql: str = "8.4"
) -> dict[str, Any]:
    """The installer's document for `env`, built the way `plan` builds it."""
    cfg = plan_config(env, probe_config(env), os_="linux")
    items = [node(f"node-{i}", "8", "16Gi") for i in range(storage_nodes)]
    nodes = parse_nodes(nodes_json(*items).encode())
    training = resolve_training(cfg.probe.override, ABSENT, nodes)
    return values_document(cfg, training, nodes, Gpu(gpu), mysql)


def helm_env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }


def helm_template(helm: str, doc: dict[str, Any], workdir: Path) -> dict[str, dict[str, Any]]:
    """Write `doc` with write_values, run `helm template`, return manifests by kind/name."""
    values = workdir / "data" / "values.yaml"
    write_values(str(values), to_yaml(doc), env={}, os_="linux")
    result = subprocess.run(
        [helm, "template", "rel", str(CHART), "--values", str(values)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=helm_env(workdir),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    manifests = [m for m in yaml.safe_load_all(result.stdout) if m]
    return {f"{m['kind']}/{m['metadata']['name']}": m for m in manifests}


def secret(manifests: dict[str, dict[str, Any]], name: str) -> dict[str, str]:
    data = manifests[f"Secret/{name}"]["data"]
    return {key: base64.b64decode(value).decode("utf-8") for key, value in data.items()}


def settings_echo(manifests: dict[str, dict[str, Any]]) -> dict[str, Any]:
    data = manifests["ConfigMap/rel-settings"]["data"]
    return {key: json.loads(value) for key, value in data.items()}


def credentials_env(
    client_id: str, password: str, registry_password: str, proxy_password: str
) -> dict[str, str]:
    return {
        "HOME": "/home/ana",
        "TRACEBLOC_CLIENT_ID": client_id,
        "TRACEBLOC_CLIENT_PASSWORD": password,
        "TRACEBLOC_IMAGE_REGISTRY": "https://mirror.corp.example:5000/",
        "TRACEBLOC_REGISTRY_USERNAME": "robot$ci",
        "TRACEBLOC_REGISTRY_PASSWORD": registry_password,
        "TRACEBLOC_REGISTRY_EMAIL": "ops@corp.example",
        # A URL carries its password percent-encoded: a raw control character is no URL (and
        # is refused before it can reach a root-owned unit file).
        "HTTPS_PROXY": f"http://ana:{quote(proxy_password, safe='')}@proxy.corp.example:3128/",
        "NO_PROXY": "localhost,127.0.0.1,.svc,.cluster.local",
        "CLIENT_ENV": "production",
    }


def assert_helm_read_back(helm: str, env: dict[str, str], workdir: Path, **kwargs: Any) -> None:
    doc = render(env, **kwargs)
    manifests = helm_template(helm, doc, workdir)

    # Every env key, exactly (the chart's default env is empty, so nothing is added).
    assert manifests["ConfigMap/rel-env"]["data"] == doc["env"]
    # The credentials are what the user typed, not merely what we rendered.
    assert secret(manifests, "rel-credentials") == {
        "clientId": env["TRACEBLOC_CLIENT_ID"],
        "clientPassword": env["TRACEBLOC_CLIENT_PASSWORD"],
    }
    if "TRACEBLOC_REGISTRY_PASSWORD" in env:
        registry = secret(manifests, "rel-registry")
        assert registry["password"] == env["TRACEBLOC_REGISTRY_PASSWORD"]
        assert registry == {k: v for k, v in doc["dockerRegistry"].items() if k != "create"}
    else:
        assert "Secret/rel-registry" not in manifests

    echo = settings_echo(manifests)
    for key in ("storageClass", "hostPath", "pvc", "pvcAccessMode", "clusterScope"):
        assert echo[key] == doc[key], key
    assert echo["singleNode"] == doc.get("singleNode", False)
    assert echo["global.imageRegistry"] == doc.get("global", {}).get("imageRegistry", "")
    assert echo["images.mysqlClient"] == doc.get("images", {}).get("mysqlClient", {})
    assert echo["gpu.devicePlugin"] == doc.get("gpu", {}).get("devicePlugin", {})
    storage_class = manifests.get(f"StorageClass/{doc['storageClass']['name']}")
    if doc["storageClass"]["create"]:
        assert storage_class is not None
        assert storage_class["provisioner"] == doc["storageClass"]["provisioner"]
        assert storage_class["allowVolumeExpansion"] is doc["storageClass"]["allowVolumeExpansion"]
        assert storage_class.get("parameters", {}) == doc["storageClass"]["parameters"]
    else:
        assert storage_class is None


@pytest.mark.parametrize(
    ("storage_mode", "nodes", "gpu", "mysql"),
    [
        pytest.param("hostpath", 1, "nvidia", "8.4", id="hostpath-single-node-nvidia-8.4"),
        pytest.param("hostpath", 3, None, "5.7", id="hostpath-multi-node-no-gpu-5.7"),
        pytest.param("node-local", 1, "amd", "5.7", id="node-local-amd"),
    ],
)
def test_helm_reads_back_every_key_we_write(
    real_helm: str, tmp_path: Path, storage_mode: str, nodes: int, gpu: str | None, mysql: str
) -> None:
    env = credentials_env("client-0042", 'p@ss:"w#rd"', "reg:pa@ss", "px:p@ss")
    env["TB_STORAGE_MODE"] = storage_mode
    assert_helm_read_back(real_helm, env, tmp_path, storage_nodes=nodes, gpu=gpu, mysql=mysql)


def test_helm_reads_back_a_minimal_document(real_helm: str, tmp_path: Path) -> None:
    env = {"HOME": "/home/ana", "TRACEBLOC_CLIENT_ID": "id", "TRACEBLOC_CLIENT_PASSWORD": "pw"}
    assert_helm_read_back(real_helm, env, tmp_path, gpu=None, mysql="5.7")


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_strings_survive_helm(real_helm: str, tmp_path: Path, text: str) -> None:
    env = credentials_env(text, text, text, text)
    assert_helm_read_back(real_helm, env, tmp_path)


SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
# What clean_credential keeps: everything but surrogates (not encodable) and C0 controls.
typed = st.text(
    alphabet=st.characters(
        blacklist_categories=SURROGATES, blacklist_characters=[chr(c) for c in range(0x20)]
    ),
    min_size=1,
    max_size=40,
)
awkward = st.sampled_from(['"', "'", ":", "#", "@", " ", "yes", "null", "0x10", "~", "ü", "✓"])
credential = st.one_of(typed, st.builds(lambda a, b, c: a + b + c, awkward, typed, awkward))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    client_id=credential,
    password=credential,
    registry_password=credential,
    proxy_password=credential,
)
@example(client_id=" id ", password="yes", registry_password="0x10", proxy_password="~")
@example(client_id="null", password=" :#@'\" ", registry_password="ünï ", proxy_password="a@b:c")
def test_generated_credentials_survive_helm(
    real_helm: str, client_id: str, password: str, registry_password: str, proxy_password: str
) -> None:
    env = credentials_env(client_id, password, registry_password, proxy_password)
    with tempfile.TemporaryDirectory() as workdir:
        assert_helm_read_back(real_helm, env, Path(workdir))


@pytest.mark.parametrize("storage_mode", ["hostpath", "node-local"])
def test_helm_lint_accepts_our_values(real_helm: str, tmp_path: Path, storage_mode: str) -> None:
    env = credentials_env("client-0042", "pw", "reg", "px")
    env["TB_STORAGE_MODE"] = storage_mode
    values = tmp_path / "values.yaml"
    write_values(str(values), to_yaml(render(env)), env={}, os_="linux")
    result = subprocess.run(
        [real_helm, "lint", str(CHART), "--strict", "--values", str(values)],
        capture_output=True,
        text=True,
        env=helm_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


def test_chart_lints_on_its_own_defaults(real_helm: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [real_helm, "lint", str(CHART), "--strict"],
        capture_output=True,
        text=True,
        env=helm_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
