"""Options and environment → configuration: namespace, timeout, override, plan settings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from installer.config import (
    clean_credential,
    env_secrets,
    parse_client_env,
    parse_override,
    parse_proxy,
    parse_registry,
    parse_timeout,
    plan_config,
    probe_config,
    sanitise_namespace,
)
from installer.decide.errors import BadInput
from installer.decide.model import Connection
from installer.decide.settings import PlanConfig, Proxy, Registry

DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


# --- namespace ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param("tracebloc", "tracebloc", id="already-valid"),
        pytest.param("TraceBloc", "tracebloc", id="lowercased"),
        pytest.param("my team", "my-team", id="space-becomes-dash"),
        pytest.param("my_team", "my-team", id="underscore-becomes-dash"),
        pytest.param("team.a/b:c", "teamabc", id="other-characters-dropped"),
        pytest.param("équipe", "quipe", id="non-ascii-dropped"),
        pytest.param("a - _ b", "a-b", id="runs-collapsed"),
        pytest.param("a--b", "a-b", id="double-dash-collapsed"),
        pytest.param("--edge--", "edge", id="dashes-trimmed"),
        pytest.param(" _x_ ", "x", id="spaces-and-underscores-trimmed"),
        pytest.param("team-7", "team-7", id="digits-kept"),
        pytest.param("a" * 70, "a" * 53, id="truncated-to-53-helms-release-name-limit"),
        pytest.param("a" * 52 + "-b", "a" * 52, id="no-trailing-dash-after-truncation"),
        pytest.param("a" * 51 + "--" + "b", "a" * 51 + "-b", id="collapse-before-truncation"),
        pytest.param("", "default", id="empty"),
        pytest.param("!!!", "default", id="nothing-left"),
        pytest.param("- _ -", "default", id="only-separators"),
    ],
)
def test_sanitise_namespace(raw: str, expected: str) -> None:
    assert sanitise_namespace(raw) == expected


@given(raw=st.text())
def test_sanitised_namespace_is_always_a_dns1123_label(raw: str) -> None:
    result = sanitise_namespace(raw)
    assert DNS1123.match(result)
    assert len(result) <= 53


@given(raw=st.from_regex(DNS1123, fullmatch=True).filter(lambda s: len(s) <= 53 and "--" not in s))
def test_valid_label_without_dash_runs_is_unchanged(raw: str) -> None:
    # Runs of `-` are collapsed by contract even though DNS-1123 allows them.
    assert sanitise_namespace(raw) == raw


# --- probe_config ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [
        pytest.param("from-flag", {"TB_NAMESPACE": "from-env"}, "from-flag", id="flag-beats-env"),
        pytest.param(None, {"TB_NAMESPACE": "From Env"}, "from-env", id="env-when-no-flag"),
        pytest.param(None, {"TB_NAMESPACE": ""}, "tracebloc", id="empty-env-is-default"),
        pytest.param(None, {}, "tracebloc", id="default"),
    ],
)
def test_probe_config_namespace_precedence(
    flag: str | None, env: dict[str, str], expected: str
) -> None:
    cfg = probe_config(env, namespace=flag)
    assert cfg.namespace == expected
    assert cfg.release == expected


def test_a_sanitised_tb_namespace_is_said() -> None:
    cfg = probe_config({"TB_NAMESPACE": "Data Science"})
    assert cfg.namespace == "data-science"
    assert cfg.notes == (
        "TB_NAMESPACE='Data Science' is used as namespace 'data-science' (made a DNS-1123 label)",
    )
    assert probe_config({"TB_NAMESPACE": "ops"}).notes == ()


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        pytest.param("", "is empty", id="empty"),
        pytest.param("a" * 54, "is 54 characters long", id="longer-than-helms-53"),
        pytest.param("Team_A", "is not a DNS-1123 label", id="upper-case-and-underscore"),
        pytest.param("-edge", "is not a DNS-1123 label", id="leading-dash"),
        pytest.param("edge-", "is not a DNS-1123 label", id="trailing-dash"),
        pytest.param("a.b", "is not a DNS-1123 label", id="dot"),
        pytest.param("!!", "is not a DNS-1123 label", id="nothing-valid"),
    ],
)
def test_a_namespace_flag_is_validated_not_rewritten(flag: str, said: str) -> None:
    with pytest.raises(BadInput) as caught:
        probe_config({"TB_NAMESPACE": "from-env"}, namespace=flag)
    assert said in caught.value.message
    assert "--namespace" in caught.value.message
    assert "53" in caught.value.remedy


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease", "default"])
@pytest.mark.parametrize("where", ["flag", "env"])
def test_the_clusters_own_namespaces_are_refused(namespace: str, where: str) -> None:
    with pytest.raises(BadInput) as caught:
        if where == "flag":
            probe_config({}, namespace=namespace)
        else:
            probe_config({"TB_NAMESPACE": namespace})
    assert "may not use" in caught.value.message and namespace in caught.value.message


def test_a_tb_namespace_sanitised_to_default_is_refused() -> None:
    with pytest.raises(BadInput, match="'default' is a namespace"):
        probe_config({"TB_NAMESPACE": "!!!"})


def test_a_namespace_flag_of_53_characters_is_kept() -> None:
    assert probe_config({}, namespace="a" * 53).namespace == "a" * 53


def test_probe_config_defaults() -> None:
    cfg = probe_config({})
    assert cfg.conn == Connection(None, None)
    assert cfg.timeout == 10
    assert cfg.override is None


def test_probe_config_reads_connection_timeout_and_override() -> None:
    env = {"TB_PROBE_TIMEOUT_S": "2.5", "TRACEBLOC_TRAINING_RESOURCES": "cpu=4,memory=16Gi"}
    cfg = probe_config(env, kubeconfig="/k/config", context="prod")
    assert cfg.conn == Connection("/k/config", "prod")
    assert cfg.timeout == 2.5
    assert cfg.override == "cpu=4,memory=16Gi"


def test_probe_config_empty_connection_flags_are_none() -> None:
    assert probe_config({}, kubeconfig="", context="").conn == Connection(None, None)


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"TB_PROBE_TIMEOUT_S": "0"}, id="bad-timeout"),
        pytest.param({"TRACEBLOC_TRAINING_RESOURCES": "4 cores"}, id="bad-override"),
    ],
)
def test_probe_config_bad_input(env: dict[str, str]) -> None:
    with pytest.raises(BadInput):
        probe_config(env)


# --- timeout --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(None, 10.0, id="unset"),
        pytest.param("", 10.0, id="empty"),
        pytest.param("  ", 10.0, id="blank"),
        pytest.param("3", 3.0, id="integer"),
        pytest.param("0.25", 0.25, id="fraction"),
        pytest.param(" 30 ", 30.0, id="spaces"),
    ],
)
def test_parse_timeout(raw: str | None, expected: float) -> None:
    assert parse_timeout({} if raw is None else {"TB_PROBE_TIMEOUT_S": raw}) == expected


@pytest.mark.parametrize("raw", ["0", "-1", "abc", "nan", "inf", "-inf", "1e400", "10s"])
def test_parse_timeout_rejects(raw: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_timeout({"TB_PROBE_TIMEOUT_S": raw})
    assert info.value.exit_code == 2
    assert "TB_PROBE_TIMEOUT_S" in info.value.message


# --- override -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(None, None, id="unset"),
        pytest.param("", None, id="empty"),
        pytest.param("   ", None, id="blank"),
        pytest.param("cpu=4,memory=16Gi", "cpu=4,memory=16Gi", id="whole"),
        pytest.param("cpu=500m,memory=1.5Gi", "cpu=500m,memory=1.5Gi", id="fractional"),
        pytest.param(" cpu=4,memory=16Gi\n", "cpu=4,memory=16Gi", id="trimmed"),
    ],
)
def test_parse_override(raw: str | None, expected: str | None) -> None:
    assert parse_override(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("4,16Gi", id="bare-values"),
        pytest.param("memory=16Gi,cpu=4", id="wrong-order"),
        pytest.param("cpu=4", id="missing-memory"),
        pytest.param("cpu=0,memory=16Gi", id="zero-cpu"),
        pytest.param("cpu=4,memory=16GB", id="GB"),
        pytest.param("cpu=4,memory=16Gi,gpu=1", id="extra-pair"),
    ],
)
def test_parse_override_rejects(raw: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_override(raw)
    assert info.value.exit_code == 2
    assert "TRACEBLOC_TRAINING_RESOURCES" in info.value.message
    assert "cpu=<quantity>,memory=<quantity>" in info.value.remedy


# --- credentials ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(f"{PASTE_START}s3cret{PASTE_END}", "s3cret", id="bracketed-paste"),
        pytest.param("s3cret\r\n", "s3cret", id="trailing-newline"),
        pytest.param("s3\x00c\x07r\x1bet\t", "s3cret", id="c0-controls"),
        pytest.param(
            f"{PASTE_START} pass word {PASTE_END}", " pass word ", id="paste-keeps-spaces"
        ),
        pytest.param("  leading and trailing  ", "  leading and trailing  ", id="spaces-kept"),
        pytest.param("q'u\"o`te", "q'u\"o`te", id="quotes-kept"),
        pytest.param("a:b#c@d", "a:b#c@d", id="colon-hash-at-kept"),
        pytest.param("pässwörd-密码-🔑", "pässwörd-密码-🔑", id="unicode-kept"),
        pytest.param("back\\slash $HOME %PATH%", "back\\slash $HOME %PATH%", id="shell-chars-kept"),
        pytest.param("[200~", "[200~", id="marker-text-without-escape-kept"),
        pytest.param("clie\x1b[Dnt-1\x1b[C", "client-1", id="csi-arrow-keys-dropped"),
        pytest.param("client\x1bOA-1", "client-1", id="ss3-arrow-key-dropped"),
        pytest.param("id\x1b[1;5D-2\x1b[15~", "id-2", id="csi-with-parameters-and-f-key"),
    ],
)
def test_clean_credential(raw: str, expected: str) -> None:
    assert clean_credential(raw) == expected


printable = st.text(st.characters(min_codepoint=0x20, blacklist_categories=("Cs",)))


@given(text=printable)
def test_clean_credential_keeps_anything_without_control_characters(text: str) -> None:
    assert clean_credential(text) == text


escape = st.one_of(
    st.builds(
        lambda p, f: f"\x1b[{p}{f}",
        st.text(st.sampled_from("0123456789;?"), max_size=6),
        st.sampled_from("ABCDHF~mRu"),
    ),
    st.builds(lambda f: f"\x1bO{f}", st.sampled_from("ABCDPQRS")),
)


@given(parts=st.lists(st.tuples(printable, escape)), tail=printable)
def test_clean_credential_drops_every_escape_sequence_and_keeps_the_text(
    parts: list[tuple[str, str]], tail: str
) -> None:
    raw = "".join(text + seq for text, seq in parts) + tail
    assert clean_credential(raw) == "".join(text for text, _ in parts) + tail


@given(text=printable)
def test_clean_credential_strips_a_bracketed_paste(text: str) -> None:
    assert clean_credential(f"{PASTE_START}{text}{PASTE_END}\n") == text


# --- CLIENT_ENV -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(None, None, id="unset"),
        pytest.param("", None, id="empty"),
        pytest.param("dev", "dev", id="dev"),
        pytest.param("development", "dev", id="development"),
        pytest.param("stg", "stg", id="stg"),
        pytest.param("staging", "stg", id="staging"),
        pytest.param("prod", "prod", id="prod"),
        pytest.param("production", "prod", id="production"),
        pytest.param(" Production ", "prod", id="case-and-spaces"),
    ],
)
def test_parse_client_env(raw: str | None, expected: str | None) -> None:
    assert parse_client_env(raw) == expected


@pytest.mark.parametrize("raw", ["qa", "prd", "dev,prod", "local"])
def test_parse_client_env_rejects(raw: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_client_env(raw)
    assert info.value.exit_code == 2
    assert "CLIENT_ENV" in info.value.message


# --- proxy ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, None, id="no-proxy-set"),
        pytest.param({"HTTP_PROXY": "  "}, None, id="blank-proxy"),
        pytest.param(
            {"HTTP_PROXY": "http://proxy.corp:3128"},
            Proxy("proxy.corp", "3128"),
            id="host-and-port",
        ),
        pytest.param(
            {
                "HTTP_PROXY": "http://one:1",
                "HTTPS_PROXY": "http://two:2",
                "http_proxy": "http://three:3",
                "https_proxy": "http://four:4",
            },
            Proxy("one", "1"),
            id="HTTP_PROXY-first",
        ),
        pytest.param(
            {
                "HTTPS_PROXY": "http://two:2",
                "http_proxy": "http://three:3",
                "https_proxy": "http://four:4",
            },
            Proxy("two", "2"),
            id="HTTPS_PROXY-second",
        ),
        pytest.param(
            {"http_proxy": "http://three:3", "https_proxy": "http://four:4"},
            Proxy("three", "3"),
            id="http_proxy-third",
        ),
        pytest.param({"https_proxy": "http://four:4"}, Proxy("four", "4"), id="https_proxy-last"),
        pytest.param(
            {"HTTP_PROXY": "", "HTTPS_PROXY": "http://two:2"},
            Proxy("two", "2"),
            id="empty-first-is-skipped",
        ),
        pytest.param(
            {"HTTP_PROXY": "http://proxy.corp:3128/some/path?x=1#frag"},
            Proxy("proxy.corp", "3128"),
            id="path-stripped",
        ),
        pytest.param(
            {"HTTP_PROXY": "proxy.corp:8080"}, Proxy("proxy.corp", "8080"), id="no-scheme"
        ),
        pytest.param(
            {"HTTP_PROXY": "http://proxy.corp"}, Proxy("proxy.corp", "80"), id="http-default-port"
        ),
        pytest.param(
            {"HTTP_PROXY": "https://proxy.corp/"},
            Proxy("proxy.corp", "443"),
            id="https-default-port",
        ),
        pytest.param(
            {"HTTP_PROXY": "proxy.corp"}, Proxy("proxy.corp", "80"), id="bare-host-default-port"
        ),
        pytest.param(
            {"HTTP_PROXY": "http://ana:s3cret@proxy.corp:3128"},
            Proxy("proxy.corp", "3128", "ana", "s3cret"),
            id="credentials",
        ),
        pytest.param(
            {"HTTP_PROXY": "http://ana:p@ss:w@rd@proxy.corp:3128"},
            Proxy("proxy.corp", "3128", "ana", "p@ss:w@rd"),
            id="password-with-colon-and-at",
        ),
        pytest.param(
            {"HTTP_PROXY": "http://ana:pa/ss#1@proxy.corp:3128/"},
            Proxy("proxy.corp", "3128", "ana", "pa/ss#1"),
            id="password-with-slash-and-hash",
        ),
        pytest.param(
            {"HTTP_PROXY": "http://ana@proxy.corp:3128"},
            Proxy("proxy.corp", "3128", "ana", None),
            id="username-without-password",
        ),
        pytest.param({"HTTP_PROXY": "http://[::1]:3128"}, Proxy("[::1]", "3128"), id="ipv6"),
        pytest.param(
            {"HTTP_PROXY": "http://[fd00::2]"}, Proxy("[fd00::2]", "80"), id="ipv6-default-port"
        ),
        pytest.param(
            {"HTTP_PROXY": "http://ana:pw@[::1]:3128"},
            Proxy("[::1]", "3128", "ana", "pw"),
            id="ipv6-with-credentials",
        ),
    ],
)
def test_parse_proxy(env: dict[str, str], expected: Proxy | None) -> None:
    assert parse_proxy(env) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("http://proxy.corp:abc", id="port-not-a-number"),
        pytest.param("http://proxy.corp:0", id="port-zero"),
        pytest.param("http://proxy.corp:65536", id="port-too-big"),
        pytest.param("http://proxy.corp:-1", id="port-negative"),
        pytest.param("http://proxy.corp:80:81", id="two-ports"),
        pytest.param("http://", id="no-host"),
        pytest.param("http://ana:pw@:3128", id="credentials-without-host"),
    ],
)
def test_parse_proxy_rejects(value: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_proxy({"HTTPS_PROXY": value})
    assert info.value.exit_code == 2
    assert "HTTPS_PROXY" in info.value.message


@given(
    username=st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters=":@/"),
        min_size=1,
    ),
    password=st.text(st.characters(min_codepoint=0x20, blacklist_categories=("Cs",)), min_size=1),
    port=st.integers(1, 65535),
)
def test_proxy_credentials_survive_any_password(username: str, password: str, port: int) -> None:
    env = {"HTTP_PROXY": f"http://{username}:{password}@proxy.corp:{port}"}
    assert parse_proxy(env) == Proxy("proxy.corp", str(port), username, password)


# --- registry -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, Registry(mirror=None), id="nothing-set"),
        pytest.param(
            {"TRACEBLOC_IMAGE_REGISTRY": "mirror.corp"},
            Registry("mirror.corp"),
            id="mirror-bare-host",
        ),
        pytest.param(
            {"TRACEBLOC_IMAGE_REGISTRY": "https://mirror.corp:5000/"},
            Registry("mirror.corp:5000"),
            id="mirror-scheme-and-slash-stripped",
        ),
        pytest.param(
            {"TRACEBLOC_IMAGE_REGISTRY": " http://mirror.corp// "},
            Registry("mirror.corp"),
            id="mirror-spaces-and-slashes-stripped",
        ),
        pytest.param(
            {"TRACEBLOC_REGISTRY_USERNAME": "ana", "TRACEBLOC_REGISTRY_PASSWORD": "pw"},
            Registry(None, "ana", "pw", "https://index.docker.io/v1/", ""),
            id="credentials-default-to-docker-hub",
        ),
        pytest.param(
            {
                "TRACEBLOC_IMAGE_REGISTRY": "https://mirror.corp/",
                "TRACEBLOC_REGISTRY_USERNAME": "ana",
                "TRACEBLOC_REGISTRY_PASSWORD": "pw",
            },
            Registry("mirror.corp", "ana", "pw", "https://mirror.corp", ""),
            id="credentials-server-from-mirror",
        ),
        pytest.param(
            {
                "TRACEBLOC_IMAGE_REGISTRY": "mirror.corp",
                "TRACEBLOC_REGISTRY_SERVER": "https://auth.corp/v2/",
                "TRACEBLOC_REGISTRY_USERNAME": "ana",
                "TRACEBLOC_REGISTRY_PASSWORD": "pw",
                "TRACEBLOC_REGISTRY_EMAIL": "ana@corp.example",
            },
            Registry("mirror.corp", "ana", "pw", "https://auth.corp/v2/", "ana@corp.example"),
            id="explicit-server-wins",
        ),
        pytest.param(
            {
                "TRACEBLOC_REGISTRY_USERNAME": "ana",
                "TRACEBLOC_REGISTRY_PASSWORD": f"{PASTE_START} p:w#@ {PASTE_END}",
            },
            Registry(None, "ana", " p:w#@ ", "https://index.docker.io/v1/", ""),
            id="password-paste-cleaned-rest-kept",
        ),
    ],
)
def test_parse_registry(env: dict[str, str], expected: Registry) -> None:
    assert parse_registry(env) == expected


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        pytest.param(
            {"TRACEBLOC_REGISTRY_USERNAME": "ana"},
            "TRACEBLOC_REGISTRY_PASSWORD",
            id="username-without-password",
        ),
        pytest.param(
            {"TRACEBLOC_REGISTRY_PASSWORD": "pw"},
            "TRACEBLOC_REGISTRY_USERNAME",
            id="password-without-username",
        ),
        pytest.param(
            {"TRACEBLOC_REGISTRY_USERNAME": "ana", "TRACEBLOC_REGISTRY_PASSWORD": ""},
            "TRACEBLOC_REGISTRY_PASSWORD",
            id="empty-password",
        ),
    ],
)
def test_parse_registry_incomplete_credentials(env: dict[str, str], missing: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_registry(env)
    assert info.value.exit_code == 2
    assert missing in info.value.message


# --- plan_config ----------------------------------------------------------------------------


def plan(env: dict[str, str], *, os_: str = "linux", chart: str | None = None) -> PlanConfig:
    return plan_config(env, probe_config(env), os_=os_, chart=chart)


LINUX_HOME = {"HOME": "/home/ana"}
WINDOWS_HOME = {"USERPROFILE": r"C:\Users\ana", "HOME": "/should/not/be/used"}


@pytest.mark.parametrize(
    ("env", "os_", "data_dir", "values_path", "given"),
    [
        pytest.param(
            LINUX_HOME,
            "linux",
            "/home/ana/.tracebloc",
            "/home/ana/.tracebloc/values.yaml",
            False,
            id="linux-default",
        ),
        pytest.param(
            LINUX_HOME,
            "darwin",
            "/home/ana/.tracebloc",
            "/home/ana/.tracebloc/values.yaml",
            False,
            id="darwin-default",
        ),
        pytest.param(
            WINDOWS_HOME,
            "windows",
            r"C:\Users\ana\.tracebloc",
            r"C:\Users\ana\.tracebloc\values.yaml",
            False,
            id="windows-userprofile",
        ),
        pytest.param(
            {**LINUX_HOME, "HOST_DATA_DIR": "/srv/tb"},
            "linux",
            "/srv/tb",
            "/srv/tb/values.yaml",
            False,
            id="linux-host-data-dir",
        ),
        pytest.param(
            {"HOST_DATA_DIR": "/srv/tb"},
            "linux",
            "/srv/tb",
            "/srv/tb/values.yaml",
            False,
            id="host-data-dir-needs-no-home",
        ),
        pytest.param(
            {"HOST_DATA_DIR": r"D:\tb"},
            "windows",
            r"D:\tb",
            r"D:\tb\values.yaml",
            False,
            id="windows-host-data-dir",
        ),
        pytest.param(
            {**LINUX_HOME, "TRACEBLOC_VALUES_FILE": "/tmp/mine.yaml"},
            "linux",
            "/home/ana/.tracebloc",
            "/tmp/mine.yaml",
            True,
            id="dev-mode-values-file",
        ),
        pytest.param(
            {**WINDOWS_HOME, "TRACEBLOC_VALUES_FILE": r"C:\dev\mine.yaml"},
            "windows",
            r"C:\Users\ana\.tracebloc",
            r"C:\dev\mine.yaml",
            True,
            id="windows-dev-mode-values-file",
        ),
    ],
)
def test_plan_config_paths(
    env: dict[str, str], os_: str, data_dir: str, values_path: str, given: bool
) -> None:
    cfg = plan(env, os_=os_)
    assert cfg.host_data_dir == data_dir
    assert cfg.values_path == values_path
    assert cfg.values_given is given


@pytest.mark.parametrize(
    ("env", "os_", "variable"),
    [
        pytest.param({}, "linux", "HOME", id="linux-without-home"),
        pytest.param({"HOME": "/home/ana"}, "windows", "USERPROFILE", id="windows-ignores-home"),
    ],
)
def test_plan_config_without_a_home(env: dict[str, str], os_: str, variable: str) -> None:
    with pytest.raises(BadInput) as info:
        plan(env, os_=os_)
    assert variable in info.value.message
    assert "HOST_DATA_DIR" in info.value.remedy


@pytest.mark.parametrize(
    ("env", "flag", "chart", "is_default"),
    [
        pytest.param({}, None, "tracebloc/client", True, id="default-chart"),
        pytest.param(
            {"TRACEBLOC_CHART_PATH": "/src/chart"}, None, "/src/chart", False, id="chart-path-env"
        ),
        pytest.param(
            {"TRACEBLOC_CHART_PATH": "/src/chart"},
            "oci://reg/client",
            "oci://reg/client",
            False,
            id="flag-beats-chart-path",
        ),
        pytest.param({}, "./client", "./client", False, id="flag-only"),
        pytest.param(
            {"TRACEBLOC_CHART_PATH": "  "},
            "",
            "tracebloc/client",
            True,
            id="blank-flag-and-env-is-default",
        ),
    ],
)
def test_plan_config_chart(
    env: dict[str, str], flag: str | None, chart: str, is_default: bool
) -> None:
    cfg = plan({**LINUX_HOME, **env}, chart=flag)
    assert cfg.chart == chart
    assert cfg.chart_is_default is is_default


@pytest.mark.parametrize(
    ("env", "storage", "engine"),
    [
        pytest.param({}, "hostpath", "auto", id="defaults"),
        pytest.param(
            {"TB_STORAGE_MODE": "node-local", "TB_MYSQL_ENGINE": "8.4"},
            "node-local",
            "8.4",
            id="node-local-and-8.4",
        ),
        pytest.param(
            {"TB_STORAGE_MODE": " HostPath ", "TB_MYSQL_ENGINE": "5.7"},
            "hostpath",
            "5.7",
            id="case-and-spaces",
        ),
        pytest.param(
            {"TB_STORAGE_MODE": "", "TB_MYSQL_ENGINE": ""},
            "hostpath",
            "auto",
            id="empty-is-default",
        ),
    ],
)
def test_plan_config_storage_and_mysql(env: dict[str, str], storage: str, engine: str) -> None:
    cfg = plan({**LINUX_HOME, **env})
    assert cfg.storage_mode == storage
    assert cfg.mysql_engine == engine


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        pytest.param({"TB_STORAGE_MODE": "nfs"}, "TB_STORAGE_MODE", id="unknown-storage-mode"),
        pytest.param({"TB_MYSQL_ENGINE": "8.0"}, "TB_MYSQL_ENGINE", id="unknown-mysql-engine"),
        pytest.param({"CLIENT_ENV": "qa"}, "CLIENT_ENV", id="unknown-client-env"),
        pytest.param({"HTTP_PROXY": "http://p:99999"}, "HTTP_PROXY", id="bad-proxy-port"),
        pytest.param(
            {"TRACEBLOC_REGISTRY_USERNAME": "ana"},
            "TRACEBLOC_REGISTRY_PASSWORD",
            id="incomplete-registry-credentials",
        ),
    ],
)
def test_plan_config_bad_input(env: dict[str, str], variable: str) -> None:
    with pytest.raises(BadInput) as info:
        plan({**LINUX_HOME, **env})
    assert info.value.exit_code == 2
    assert variable in info.value.message


def test_plan_config_credentials_cleaned_and_reported() -> None:
    env = {
        **LINUX_HOME,
        "TRACEBLOC_CLIENT_ID": "client-1",
        "TRACEBLOC_CLIENT_PASSWORD": f"{PASTE_START} p'w:#@é {PASTE_END}",
    }
    cfg = plan(env)
    assert cfg.client_id == "client-1"
    assert cfg.client_password == " p'w:#@é "
    assert cfg.cleaned == ("TRACEBLOC_CLIENT_PASSWORD",)
    assert cfg.client_password in cfg.secrets


def test_plan_config_without_credentials() -> None:
    cfg = plan(LINUX_HOME)
    assert cfg.client_id is None
    assert cfg.client_password is None
    assert cfg.cleaned == ()
    assert cfg.secrets == (None, None, None)


def test_plan_config_all_secrets_listed() -> None:
    env = {
        **LINUX_HOME,
        "TRACEBLOC_CLIENT_PASSWORD": "client-pw",
        "TRACEBLOC_REGISTRY_USERNAME": "ana",
        "TRACEBLOC_REGISTRY_PASSWORD": "registry-pw",
        "HTTPS_PROXY": "http://bob:proxy-pw@proxy.corp:3128",
    }
    assert plan(env).secrets == ("client-pw", "registry-pw", "proxy-pw")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, None, id="unset"),
        pytest.param({"NO_PROXY": "localhost,.corp"}, "localhost,.corp", id="upper"),
        pytest.param({"no_proxy": "127.0.0.1"}, "127.0.0.1", id="lower"),
        pytest.param({"NO_PROXY": "a", "no_proxy": "b"}, "a", id="upper-first"),
    ],
)
def test_plan_config_no_proxy(env: dict[str, str], expected: str | None) -> None:
    assert plan({**LINUX_HOME, **env}).no_proxy == expected


def test_plan_config_carries_the_probe_config() -> None:
    env = {**LINUX_HOME, "TB_NAMESPACE": "Team A", "CLIENT_ENV": "staging"}
    cfg = plan(env)
    assert cfg.probe.namespace == "team-a"
    assert cfg.client_env == "stg"


# --- env_secrets: what the redactor masks before anything is validated --------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, set(), id="nothing-set"),
        pytest.param({"TRACEBLOC_CLIENT_PASSWORD": "hunter2"}, {"hunter2"}, id="client-password"),
        pytest.param(
            {"TRACEBLOC_CLIENT_PASSWORD": PASTE_START + "hunter2" + PASTE_END},
            {PASTE_START + "hunter2" + PASTE_END, "hunter2"},
            id="pasted-password-masked-as-typed-and-as-cleaned",
        ),
        pytest.param({"TRACEBLOC_REGISTRY_PASSWORD": "r3g"}, {"r3g"}, id="registry-password"),
        pytest.param(
            {"HTTPS_PROXY": "http://ana:p@ss:w0rd@proxy:3128"},
            {"p@ss:w0rd"},
            id="proxy-password-with-at-and-colon",
        ),
        pytest.param({"http_proxy": "ana:pw@proxy:3128"}, {"pw"}, id="proxy-without-scheme"),
        pytest.param({"HTTP_PROXY": "http://ana@proxy:3128"}, set(), id="proxy-user-only"),
        pytest.param(
            {"HTTP_PROXY": "http://ana:pa/ss@proxy:3128/"}, {"pa/ss"}, id="slash-in-the-password"
        ),
    ],
)
def test_env_secrets(env: dict[str, str], expected: set[str]) -> None:
    assert env_secrets(env) == expected
