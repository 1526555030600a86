"""The local cluster's pure decisions: when it is managed, the exact k3d argv (compared with
what the twins ran for the same inputs), NO_PROXY, the node config files, drift, Docker's
budget in preflight."""

from __future__ import annotations

import pytest

from installer.decide import localcluster as lc
from installer.decide import preflight
from installer.decide.drift import Container, DockerRead, Inspected, budget_machine, drift
from installer.decide.errors import BadInput
from installer.decide.model import Connection, KubeTarget, MachineFacts
from installer.decide.settings import Thresholds
from installer.edges.docker import parse_info
from installer.edges.k3d import parse_list

DATA = "/home/ada/.tracebloc"
GIB = 2**30

# What `scripts/lib/cluster.sh::_create_new_cluster` passed to k3d, read from the twin for
# each input (K3D_ARGS, in its order). The engine's argv is this plus OURS.
TWIN_DEFAULT = [
    "cluster",
    "create",
    "tracebloc",
    "--servers",
    "1",
    "--agents",
    "1",
    "--api-port",
    "127.0.0.1:6550",
    "-v",
    f"{DATA}:/tracebloc@all",
    "--k3s-arg",
    "--disable=traefik@server:*",
    "--k3s-arg",
    "--disable=servicelb@server:*",
    "--k3s-arg",
    "--disable=local-storage@server:*",
    "--wait",
    "--timeout",
    "15m",
    "--image",
    "rancher/k3s:v1.29.4-k3s1",
]
TWIN_NODE_LOCAL = [
    "cluster",
    "create",
    "tracebloc",
    "--servers",
    "1",
    "--agents",
    "0",
    "--api-port",
    "127.0.0.1:6550",
    "--k3s-arg",
    "--disable=traefik@server:*",
    "--k3s-arg",
    "--disable=servicelb@server:*",
    "--wait",
    "--timeout",
    "15m",
    "--image",
    "rancher/k3s:v1.29.4-k3s1",
]
TWIN_EVERYTHING = [
    "cluster",
    "create",
    "lab",
    "--servers",
    "3",
    "--agents",
    "2",
    "--api-port",
    "127.0.0.1:6550",
    "-v",
    f"{DATA}:/tracebloc@all",
    "--k3s-arg",
    "--disable=traefik@server:*",
    "--k3s-arg",
    "--disable=servicelb@server:*",
    "--k3s-arg",
    "--disable=local-storage@server:*",
    "--wait",
    "--timeout",
    "7m",
    "-v",
    "/mnt/nfs/sets:/tracebloc-data@all",
    "--image",
    "rancher/k3s:v1.30.1-k3s1",
    "--gpus=all",
    "--config",
    "/cfg/proxy.yaml",
    "-v",
    "/etc/corp/ca.pem:/etc/ssl/certs/tracebloc-mitm-ca.crt@all",
    "--registry-config",
    "/cfg/registries.yaml",
]
OURS = ["--runtime-label", "tracebloc.io/created-by=tracebloc-installer@server:*"]
NO_FILES = lc.CreateFiles(None, None)


@pytest.mark.parametrize(
    ("env", "gpu", "files", "ca", "twin"),
    [
        pytest.param({}, False, NO_FILES, None, TWIN_DEFAULT, id="defaults"),
        pytest.param(
            {"TB_STORAGE_MODE": "node-local", "AGENTS": "3"},
            False,
            NO_FILES,
            None,
            TWIN_NODE_LOCAL,
            id="node-local-forces-one-node",
        ),
        pytest.param(
            {
                "CLUSTER_NAME": "lab",
                "SERVERS": "3",
                "AGENTS": "2",
                "TB_CREATE_TIMEOUT_MIN": "7",
                "HOST_DATASET_DIR": "/mnt/nfs/sets",
                "K8S_VERSION": "v1.30.1-k3s1",
                "TRACEBLOC_CA_BUNDLE": "/etc/corp/ca.pem",
            },
            True,
            lc.CreateFiles("/cfg/proxy.yaml", "/cfg/registries.yaml"),
            "/etc/corp/ca.pem",
            TWIN_EVERYTHING,
            id="dataset-gpu-proxy-ca-pinned",
        ),
    ],
)
def test_create_argv_is_the_scripts_plus_the_creation_label(
    env: dict[str, str], gpu: bool, files: lc.CreateFiles, ca: str | None, twin: list[str]
) -> None:
    s = lc.settings(env)
    assert lc.create_args(s, DATA, gpu=gpu, files=files, ca_path=ca) == twin + OURS


def test_latest_k3s_passes_no_image() -> None:
    args = lc.create_args(
        lc.settings({"K8S_VERSION": "latest"}), DATA, gpu=False, files=NO_FILES, ca_path=None
    )
    assert "--image" not in args


@pytest.mark.parametrize(("seconds", "text"), [(900, "15m"), (90, "90s"), (0.5, "1s")])
def test_k3d_timeouts_are_go_durations(seconds: float, text: str) -> None:
    assert lc.duration(seconds) == text


def test_start_merge_and_restart_argv_match_the_scripts() -> None:
    s = lc.settings({})
    assert lc.start_args(s) == ["cluster", "start", "tracebloc", "--wait", "--timeout", "5m"]
    assert lc.merge_args(s) == [
        "kubeconfig",
        "merge",
        "tracebloc",
        "--kubeconfig-merge-default",
        "--kubeconfig-switch-context",
    ]
    assert lc.restart_args(lc.node_names(s)) == [
        "update",
        "--restart",
        "unless-stopped",
        "k3d-tracebloc-server-0",
        "k3d-tracebloc-agent-0",
        "k3d-tracebloc-serverlb",
    ]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param({"CLUSTER_NAME": "9lives"}, "CLUSTER_NAME", id="name-starting-with-digit"),
        pytest.param({"SERVERS": "0"}, "SERVERS", id="no-server"),
        pytest.param({"AGENTS": "-1"}, "AGENTS", id="negative-agents"),
        pytest.param({"TB_LEFTOVER_ACTION": "nuke"}, "TB_LEFTOVER_ACTION", id="unknown-action"),
        pytest.param({"TB_CREATE_TIMEOUT_MIN": "08x"}, "TB_CREATE_TIMEOUT_MIN", id="bad-minutes"),
        pytest.param({"TB_API_WAIT_S": "0"}, "TB_API_WAIT_S", id="no-api-wait"),
        pytest.param(
            {"TB_STORAGE_MODE": "node-local", "HOST_DATASET_DIR": "/mnt/x"},
            "HOST_DATASET_DIR",
            id="dataset-with-node-local",
        ),
    ],
)
def test_bad_settings_are_bad_input(env: dict[str, str], message: str) -> None:
    with pytest.raises(BadInput, match=message):
        lc.settings(env)


S = lc.settings({})


@pytest.mark.parametrize(
    ("conn", "context", "manage"),
    [
        pytest.param(Connection(kubeconfig="/k"), KubeTarget(True), False, id="kubeconfig-flag"),
        pytest.param(Connection(context="x"), KubeTarget(True), False, id="context-flag"),
        pytest.param(Connection(), KubeTarget(True), True, id="no-current-context"),
        pytest.param(
            Connection(),
            KubeTarget(True, "k3d-tracebloc", cluster="k3d-tracebloc"),
            True,
            id="our-own-context",
        ),
        pytest.param(
            Connection(),
            KubeTarget(True, "office", cluster="office"),
            False,
            id="another-cluster-is-never-redirected",
        ),
        pytest.param(
            Connection(), KubeTarget(True, "gone"), True, id="current-context-names-nothing"
        ),
        pytest.param(
            Connection(),
            KubeTarget(False, reason="bad yaml"),
            None,
            id="unreadable-kubeconfig-is-undecided",
        ),
    ],
)
def test_when_the_engine_manages_the_local_cluster(
    conn: Connection, context: KubeTarget, manage: bool | None
) -> None:
    assert lc.decide(conn, context, S).manage is manage


def test_no_proxy_keeps_host_entries_first_and_adds_cluster_ranges_once() -> None:
    value = lc.no_proxy({"NO_PROXY": " corp.example, localhost ,10.0.0.0/8,"})
    parts = value.split(",")
    assert parts[:3] == ["corp.example", "localhost", "10.0.0.0/8"]
    assert parts.count("localhost") == 1 and "host.k3d.internal" in parts


def test_proxy_config_keeps_credentials_whole_and_always_carries_no_proxy() -> None:
    env = {"HTTPS_PROXY": "http://ada:p@ss:w0rd@proxy.corp:3128"}
    doc = lc.proxy_config(lc.settings(env).proxy)
    assert doc is not None
    entries = [e["envVar"] for e in doc["env"]]  # type: ignore[index]
    assert entries[0] == "HTTPS_PROXY=http://ada:p@ss:w0rd@proxy.corp:3128"
    assert entries[1].startswith("NO_PROXY=localhost,") and entries[2].startswith("no_proxy=")
    assert lc.proxy_config({"NO_PROXY": "x"}) is None


def test_registries_config_points_every_registry_at_the_node_ca() -> None:
    configs = lc.registries_config()["configs"]
    assert set(configs) == {"docker.io", "registry-1.docker.io", "auth.docker.io", "ghcr.io"}  # type: ignore[arg-type]


def test_release_dirs_follow_the_dataset_dir_for_data_only() -> None:
    assert lc.release_dirs(DATA, "/mnt/nfs", "team-a") == [
        (f"{DATA}/team-a/mysql", 0o777),
        ("/mnt/nfs/team-a/data", 0o2777),
        (f"{DATA}/team-a/logs", 0o3777),
    ]


SERVER = Container(
    env_names=frozenset({"PATH", "HTTP_PROXY", "NO_PROXY"}),
    mounts=frozenset({"/tracebloc"}),
    image="rancher/k3s:v1.29.4-k3s1",
)


@pytest.mark.parametrize(
    ("env", "server", "lb_ips", "levels"),
    [
        pytest.param(
            {"HTTP_PROXY": "http://p:1", "NO_PROXY": "x"},
            SERVER,
            ("127.0.0.1",),
            [],
            id="matching-cluster",
        ),
        pytest.param({"HTTPS_PROXY": "http://p:1"}, SERVER, (), ["warn"], id="proxy-missing"),
        pytest.param({"TRACEBLOC_CA_BUNDLE": "/ca.pem"}, SERVER, (), ["warn"], id="ca-missing"),
        pytest.param({}, SERVER, ("0.0.0.0",), ["warn"], id="api-bound-to-all-addresses"),
        pytest.param({"HOST_DATASET_DIR": "/mnt"}, SERVER, (), ["fail"], id="dataset-unmounted"),
        pytest.param(
            {"TB_STORAGE_MODE": "node-local"}, SERVER, (), ["fail"], id="node-local-onto-hostpath"
        ),
        pytest.param(
            {},
            Container(image="rancher/k3s:v1.29.4-k3s1"),
            (),
            ["fail"],
            id="hostpath-onto-node-local",
        ),
        pytest.param(
            {},
            Container(
                mounts=frozenset({"/tracebloc"}),
                image="docker.io/rancher/k3s:v1.35.5-k3s1@sha256:ab",
            ),
            (),
            ["warn"],
            id="k3s-version-drift",
        ),
    ],
)
def test_drift_of_an_existing_cluster(
    env: dict[str, str], server: Container, lb_ips: tuple[str, ...], levels: list[str]
) -> None:
    seen = Inspected(True, server=server, serverlb=Container(host_ips=lb_ips))
    found = drift(lc.settings(env), seen)
    assert [d.level for d in found] == levels
    assert all("k3d cluster delete tracebloc" in d.remedy for d in found)


def test_docker_info_of_a_running_daemon() -> None:
    read = parse_info(
        0,
        '{"MemTotal": 8331161600, "NCPU": 6, "Runtimes": {"runc": {}, '
        '"nvidia": {}}, "OperatingSystem": "Docker Desktop"}',
        "",
    )
    assert (read.state, read.memory_bytes, read.cpus, read.nvidia) == (
        "running",
        8331161600,
        6,
        True,
    )


@pytest.mark.parametrize(
    ("rc", "out", "state"),
    [
        pytest.param(
            1,
            '{"ServerErrors": ["Cannot connect to the Docker daemon"]}',
            "stopped",
            id="daemon-down-json",
        ),
        pytest.param(1, "", "stopped", id="daemon-down-no-output"),
        pytest.param(0, "<html>", "unreadable", id="not-json"),
    ],
)
def test_docker_info_that_is_not_a_running_daemon(rc: int, out: str, state: str) -> None:
    assert parse_info(rc, out, "error during connect").state == state


def test_k3d_list_matches_the_exact_name() -> None:
    out = (
        '[{"name": "tracebloc2", "serversRunning": 1, "nodes": []}, {"name": "tracebloc", '
        '"serversRunning": 0, "nodes": [{"name": "k3d-tracebloc-server-0", "role": "server"},'
        ' {"name": "k3d-tracebloc-tools", "role": "noRole"}]}]'
    )
    read = parse_list(out, "tracebloc")
    assert read.present and not read.running and read.nodes == ("k3d-tracebloc-server-0",)
    assert not parse_list("[]", "tracebloc").present


def _host(os_: str, gib: float) -> MachineFacts:
    return MachineFacts(
        os=os_,
        arch="arm64",
        cpu_count=12,
        memory_total_bytes=int(gib * GIB),
        memory_available_bytes=int(gib * GIB),
        wsl=False,
    )


@pytest.mark.parametrize(
    ("os_", "docker_gib", "level", "remedy"),
    [
        pytest.param("darwin", 4, "fail", "colima start --memory 8", id="small-mac-vm-fails"),
        pytest.param(
            "windows",
            6,
            "warn",
            "%USERPROFILE%\\.wslconfig set [wsl2] memory=16GB, run `wsl --shutdown`",
            id="windows-wsl2-is-sized-by-wslconfig",
        ),
        pytest.param(
            "darwin", 5 - 0.4, "warn", "Docker Desktop", id="vm-at-the-floor-within-grace"
        ),
    ],
)
def test_docker_budget_is_what_preflight_measures(
    os_: str, docker_gib: float, level: str, remedy: str
) -> None:
    machine = budget_machine(_host(os_, 36), DockerRead("running", int(docker_gib * GIB), 4))
    findings = preflight.check(machine, 100 * GIB, DATA, Thresholds())
    memory = [f for f in findings if f.message.startswith("Docker's memory budget")]
    assert memory[0].level == level
    assert any(remedy in f.message for f in findings if f.level == "note")
    if os_ == "windows":  # the WSL 2 backend has no such setting
        assert not any("Resources > Memory" in f.message for f in findings)


def test_a_host_too_small_for_the_floor_is_told_so() -> None:
    machine = budget_machine(_host("darwin", 6), DockerRead("running", 3 * GIB, 4))
    notes = [
        f.message
        for f in preflight.check(machine, 100 * GIB, DATA, Thresholds())
        if f.level == "note"
    ]
    assert any("use a larger machine" in n for n in notes)


def test_proxy_config_carries_the_same_variables_as_the_values_file() -> None:
    from installer.decide.settings import PROXY_VARIABLES

    env = {name: f"http://{name.lower()}:1" for name in PROXY_VARIABLES}
    doc = lc.proxy_config(lc.settings(env).proxy)
    assert doc is not None
    names = [e["envVar"].split("=", 1)[0] for e in doc["env"]]  # type: ignore[index]
    assert names == [*PROXY_VARIABLES, "NO_PROXY", "no_proxy"]
