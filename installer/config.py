"""Options and environment → validated configuration. Pure: the environment is passed in.

Every bad value becomes `BadInput` with a one-line message naming the variable and what
would be accepted; nothing here touches the disk or the cluster.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
from collections.abc import Mapping

from installer.decide import paths
from installer.decide.errors import BadInput
from installer.decide.model import Connection
from installer.decide.quantity import QuantityError
from installer.decide.resolve import validate_override
from installer.decide.settings import (
    DEFAULT_CHART,
    DEFAULT_HELM_TIMEOUT_MIN,
    DEFAULT_METRICS_WAIT_S,
    DEFAULT_NAMESPACE,
    DEFAULT_READY_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    DOCKER_HUB,
    MAX_WAIT_S,
    MYSQL_ENGINES,
    PROXY_VARIABLES,
    RESERVED_NAMESPACES,
    STORAGE_MODES,
    InstallSettings,
    PlanConfig,
    ProbeConfig,
    Proxy,
    Registry,
    env_flag,
    env_number,
    one_line,
    proxy_environment,
    split_proxy_url,
)

# The namespace is also the Helm release name, and Helm refuses release names longer than 53.
MAX_NAMESPACE = 53
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def sanitise_namespace(raw: str) -> str:
    """DNS-1123 label: lowercase; spaces and `_` → `-`; others dropped; `-` runs collapsed and
    trimmed; at most 53 characters; empty → `default`. TB_NAMESPACE only; the result is shown."""
    text = raw.lower().replace(" ", "-").replace("_", "-")
    text = re.sub(r"[^a-z0-9-]", "", text)
    text = re.sub(r"-{2,}", "-", text).strip("-")
    text = text[:MAX_NAMESPACE].rstrip("-")
    return text or "default"


def validate_namespace(raw: str, source: str = "--namespace") -> str:
    """A name given on the command line is used as given or refused: never rewritten."""
    rule = (
        f"a namespace (and release name) is 1 to {MAX_NAMESPACE} characters of a-z, 0-9 "
        "and '-', starting and ending with a letter or digit"
    )
    if not raw:
        raise BadInput(f"{source} is empty", rule)
    if len(raw) > MAX_NAMESPACE:
        raise BadInput(f"{source} {raw[:60]!r}... is {len(raw)} characters long", rule)
    if not _DNS1123_LABEL.fullmatch(raw):
        raise BadInput(f"{source} {raw!r} is not a DNS-1123 label", rule)
    return refuse_reserved(raw, source)


def refuse_reserved(namespace: str, source: str) -> str:
    """Kubernetes' own namespaces and `default` hold other tenants' objects (and the
    uninstall deletes the namespace): never the client's, whoever named them."""
    if namespace in RESERVED_NAMESPACES:
        raise BadInput(
            f"{source} {namespace!r} is a namespace the tracebloc client may not use "
            f"({', '.join(RESERVED_NAMESPACES)} belong to the cluster)",
            "choose another namespace, e.g. -n tracebloc",
        )
    return namespace


def parse_timeout(env: Mapping[str, str]) -> float:
    return env_number(env, "TB_PROBE_TIMEOUT_S", DEFAULT_TIMEOUT_S, zero_ok=False, most=MAX_WAIT_S)


def parse_override(raw: str | None) -> str | None:
    if raw is None or not raw.strip():
        return None
    try:
        return validate_override(raw)
    except QuantityError as exc:
        raise BadInput(
            f"TRACEBLOC_TRAINING_RESOURCES: {exc}",
            "use the form cpu=<quantity>,memory=<quantity>, e.g. cpu=4,memory=16Gi",
        ) from None


def probe_config(
    env: Mapping[str, str],
    *,
    namespace: str | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> ProbeConfig:
    notes: tuple[str, ...] = ()
    if namespace is not None:
        chosen = validate_namespace(namespace)
    else:
        raw_ns = env.get("TB_NAMESPACE") or DEFAULT_NAMESPACE
        chosen = refuse_reserved(sanitise_namespace(raw_ns), "TB_NAMESPACE")
        if chosen != raw_ns:
            notes = (
                f"TB_NAMESPACE={raw_ns!r} is used as namespace {chosen!r} (made a DNS-1123 label)",
            )
    return ProbeConfig(
        namespace=chosen,
        conn=Connection(kubeconfig=kubeconfig or None, context=context or None),
        timeout=parse_timeout(env),
        override=parse_override(env.get("TRACEBLOC_TRAINING_RESOURCES")),
        notes=notes,
    )


# --- plan-only settings ------------------------------------------------------------------

# A terminal's escape sequences: CSI (`ESC [ … final`: the bracketed-paste markers, arrow
# keys, F-keys) and SS3 (`ESC O x`: arrows and F1-F4 in application mode). Never typed text.
_ESCAPES = re.compile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1bO[ -~]")
_C0 = re.compile("[\x00-\x1f]")
CLIENT_ENVS = {
    "dev": "dev",
    "development": "dev",
    "stg": "stg",
    "staging": "stg",
    "prod": "prod",
    "production": "prod",
}


CREDENTIAL_VARIABLES = (
    "TRACEBLOC_CLIENT_ID",
    "TRACEBLOC_CLIENT_PASSWORD",
    "TRACEBLOC_REGISTRY_USERNAME",
    "TRACEBLOC_REGISTRY_PASSWORD",
)


def check_text(env: Mapping[str, str], names: tuple[str, ...]) -> None:
    """Each variable is text: bytes that are not UTF-8 (a Latin-1 terminal) reach Python as
    lone surrogates, which no file or request can carry. BadInput names the variable only:
    its value may be a password."""
    for name, value in env.items():
        if name not in names:
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BadInput(
                f"{name} is not valid UTF-8 text",
                f"set {name} again from a UTF-8 terminal (or locale)",
            ) from None


def clean_credential(raw: str) -> str:
    """Strip the terminal's escape sequences (bracketed-paste markers, arrow and function
    keys: CSI and SS3) and C0 control characters; keep everything else, leading and trailing
    spaces included: the stored string must be what the user typed."""
    return _C0.sub("", _ESCAPES.sub("", raw))


def env_secrets(env: Mapping[str, str]) -> set[str]:
    """Every secret the environment holds, as typed and as cleaned, for redaction. Tolerant:
    it runs before validation, so even a run that fails on bad input cannot print one."""
    found: set[str] = set()
    for name in ("TRACEBLOC_CLIENT_PASSWORD", "TRACEBLOC_REGISTRY_PASSWORD"):
        if env.get(name):
            found |= {env[name], clean_credential(env[name])}
    for name in PROXY_VARIABLES:
        userinfo = split_proxy_url(env.get(name, ""))[1]
        if userinfo is not None:
            found.add(userinfo.partition(":")[2])
    return {secret for secret in found if secret}


def parse_client_env(raw: str | None) -> str | None:
    if raw is None or not raw.strip():
        return None
    value = CLIENT_ENVS.get(raw.strip().lower())
    if value is None:
        raise BadInput(
            f"CLIENT_ENV={raw!r} is not one of dev, stg, prod (or development, staging, production)"
        )
    return value


def parse_proxy(env: Mapping[str, str]) -> Proxy | None:
    """The first set of HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy, in parts: split on the
    LAST `@` and the FIRST `:`, so both survive inside a password."""
    name, raw = next(((n, env[n]) for n in PROXY_VARIABLES if env.get(n, "").strip()), ("", ""))
    if not raw:
        return None
    scheme, userinfo, hostpart = split_proxy_url(raw)
    hostpart = re.split(r"[/?#]", hostpart, maxsplit=1)[0]
    ipv6 = re.fullmatch(r"\[(?P<host>[^\]]+)\](?::(?P<port>[^:]*))?", hostpart)
    if ipv6:
        # Brackets kept: the chart joins host and port back into a URL.
        host, port = f"[{ipv6['host']}]", ipv6["port"] or ""
    else:
        host, _, port = hostpart.partition(":")
    if not host:
        raise BadInput(f"{name} has no host: expected http://[user:password@]host[:port]")
    if not port:
        port = {"https": "443"}.get(scheme.lower(), "80")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise BadInput(f"{name} has port {port!r}, which is not a number from 1 to 65535")
    username = password = None
    if userinfo is not None:
        username, _, password = userinfo.partition(":")
    return Proxy(host=host, port=port, username=username or None, password=password or None)


def bare_host(raw: str) -> str:
    text = raw.strip()
    text = text.split("://", 1)[1] if "://" in text else text
    return text.rstrip("/")


def parse_registry(env: Mapping[str, str]) -> Registry:
    mirror = bare_host(env.get("TRACEBLOC_IMAGE_REGISTRY", "")) or None
    username = env.get("TRACEBLOC_REGISTRY_USERNAME") or None
    password = env.get("TRACEBLOC_REGISTRY_PASSWORD") or None
    if (username is None) != (password is None):
        missing = (
            "TRACEBLOC_REGISTRY_PASSWORD" if password is None else "TRACEBLOC_REGISTRY_USERNAME"
        )
        raise BadInput(f"registry credentials are incomplete: {missing} is not set")
    if username is None:
        return Registry(mirror=mirror)
    server = env.get("TRACEBLOC_REGISTRY_SERVER", "").strip() or (
        f"https://{mirror}" if mirror else DOCKER_HUB
    )
    return Registry(
        mirror=mirror,
        username=clean_credential(username),
        password=clean_credential(password or ""),
        server=server,
        email=env.get("TRACEBLOC_REGISTRY_EMAIL", "").strip(),
    )


def _choice(env: Mapping[str, str], name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = env.get(name, "").strip().lower() or default
    if value not in allowed:
        raise BadInput(f"{name}={env.get(name)!r} is not one of {', '.join(allowed)}")
    return value


def data_dir(env: Mapping[str, str], os_: str) -> str:
    """HOST_DATA_DIR, else ~/.tracebloc: the values file, install.log, support bundles."""
    return paths.data_dir(env, os_)


def plan_config(
    env: Mapping[str, str],
    probe: ProbeConfig,
    *,
    os_: str,
    chart: str | None = None,
    host_data_dir: str | None = None,
) -> PlanConfig:
    """Existence checks (chart directory, caller's values file) are the caller's: no I/O here.
    `host_data_dir`: the data directory decide/paths.py already chose (else chosen here)."""
    join = ntpath.join if os_ == "windows" else posixpath.join
    check_text(env, CREDENTIAL_VARIABLES + PROXY_VARIABLES)
    for name, value in proxy_environment(env).items():  # they reach Docker's drop-in too
        one_line(name, value)
    raw_id, raw_password = env.get("TRACEBLOC_CLIENT_ID"), env.get("TRACEBLOC_CLIENT_PASSWORD")
    client_id = clean_credential(raw_id) if raw_id else None
    client_password = clean_credential(raw_password) if raw_password else None
    cleaned = tuple(
        name
        for name, raw, value in (
            ("TRACEBLOC_CLIENT_ID", raw_id, client_id),
            ("TRACEBLOC_CLIENT_PASSWORD", raw_password, client_password),
        )
        if raw is not None and raw != value
    )

    chart_path = env.get("TRACEBLOC_CHART_PATH", "").strip()
    chart_ref = (chart or "").strip() or chart_path or None

    host_data_dir = host_data_dir or data_dir(env, os_)
    values_file = env.get("TRACEBLOC_VALUES_FILE", "").strip()
    return PlanConfig(
        probe=probe,
        client_id=client_id or None,
        client_password=client_password or None,
        cleaned=cleaned,
        client_env=parse_client_env(env.get("CLIENT_ENV")),
        proxy=parse_proxy(env),
        no_proxy=(env.get("NO_PROXY") or env.get("no_proxy") or "").strip() or None,
        registry=parse_registry(env),
        storage_mode=_choice(env, "TB_STORAGE_MODE", "hostpath", STORAGE_MODES),
        mysql_engine=_choice(env, "TB_MYSQL_ENGINE", "auto", MYSQL_ENGINES),
        chart=chart_ref or DEFAULT_CHART,
        chart_is_default=chart_ref is None,
        host_data_dir=host_data_dir,
        values_path=values_file or join(host_data_dir, "values.yaml"),
        values_given=bool(values_file),
        host_dataset_dir=env.get("HOST_DATASET_DIR", "").strip() or None,
    )


# --- install-only settings ---------------------------------------------------------------


def install_settings(env: Mapping[str, str], *, keep_context: bool = False) -> InstallSettings:
    """Every install-only setting, validated: `plan` calls this too, so it refuses what
    `install` refuses."""
    minutes = env_number(
        env, "TB_HELM_TIMEOUT_MIN", DEFAULT_HELM_TIMEOUT_MIN, zero_ok=False, most=MAX_WAIT_S / 60
    )
    set_context = env_flag(env, "TB_SET_CONTEXT_NAMESPACE", True)
    return InstallSettings(
        helm_timeout_s=minutes * 60,
        metrics_wait_s=env_number(
            env, "TB_METRICS_WAIT_S", DEFAULT_METRICS_WAIT_S, zero_ok=True, most=MAX_WAIT_S
        ),
        set_context_namespace=set_context and not keep_context,
        ready_timeout_s=env_number(
            env, "READY_TIMEOUT", DEFAULT_READY_TIMEOUT_S, zero_ok=False, most=MAX_WAIT_S
        ),
        force=env_flag(env, "TRACEBLOC_FORCE_REINSTALL", False)
        or env_flag(env, "TB_FORCE_REINSTALL", False),
    )


def check_kubeconfig_variable(env: Mapping[str, str]) -> None:
    """KUBECONFIG naming no file that exists is bad input, as a missing --kubeconfig is:
    kubectl would silently fall back to localhost:8080 and be refused. (A list with at least
    one file is what kubectl merges.)"""
    raw = env.get("KUBECONFIG", "")
    paths = [p for p in raw.split(os.pathsep) if p.strip()]
    if paths and not any(os.path.isfile(os.path.expanduser(p)) for p in paths):
        raise BadInput(
            f"KUBECONFIG={raw!r} names no file that exists",
            "point KUBECONFIG at your kubeconfig file, or unset it (then "
            "~/.kube/config is used, or the local cluster is created)",
        )


def prepare_user(env: Mapping[str, str]) -> str:
    """TB_PREPARE_USER: the user `prepare-host` grants the docker group ("" = none named),
    checked (decide/settings.prepare_user)."""
    from installer.decide.settings import prepare_user as checked

    return checked(env)


def client_name(env: Mapping[str, str]) -> str:
    """TRACEBLOC_CLIENT_NAME, the name browser sign-in registers, cleaned ("" = ask)."""
    from installer.decide.signin import clean_name

    return clean_name(env.get("TRACEBLOC_CLIENT_NAME", ""))
