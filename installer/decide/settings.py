"""The validated settings of a run, as plain data, and the pure parsers they are built with.

`installer/config.py` builds these from the options and the environment (and is read by `cli`
and `commands/` only); `commands/settings.build` calls it once per run, with the paths
(decide/paths.py) and every other check. Every lower layer receives plain values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from installer.decide.errors import BadInput
from installer.decide.model import Connection
from installer.decide.yesno import flag

DEFAULT_NAMESPACE = "tracebloc"
# The cluster's own namespaces: the client is never installed into (or uninstalled from) them.
RESERVED_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "default")


DEFAULT_TIMEOUT_S = 10.0


# No wait is longer than a week: beyond that a value is a typo, and an unbounded one would
# overflow the operating system's timer (Python raises OverflowError past ~24 days).
MAX_WAIT_S = 7 * 24 * 3600.0


@dataclass(frozen=True)
class ProbeConfig:
    namespace: str
    conn: Connection
    timeout: float
    override: str | None
    release_name: str | None = None  # an installed release found under another name
    notes: tuple[str, ...] = ()  # what the configuration changed of what was given, said once

    @property
    def release(self) -> str:
        # The Helm release is named after its namespace, as both historic installers did.
        return self.release_name or self.namespace


def env_number(
    env: Mapping[str, str],
    name: str,
    default: float,
    *,
    zero_ok: bool,
    most: float = math.inf,
) -> float:
    """The number in variable `name` (unset or empty: `default`), which must be finite, more
    than 0 (or 0 too when `zero_ok`) and at most `most`; anything else is BadInput."""
    raw = env.get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    least_ok = value >= 0 if zero_ok else value > 0
    if not (least_ok and math.isfinite(value) and value <= most):
        low = "0" if zero_ok else "more than 0"
        wanted = f"from {low} to {most:g}" if math.isfinite(most) else f"of {low} or more"
        shown = raw if len(raw) <= 40 else raw[:39] + "…"
        raise BadInput(
            f"{name}={shown!r} is not a number {wanted}",
            f"set {name} to a number such as {default:g}, or unset it",
        )
    return value


@dataclass(frozen=True)
class Thresholds:
    """The preflight floors (decide/preflight.check)."""

    min_mem_gib: float = 5
    warn_mem_gib: float = 8
    min_cpu: int = 2
    min_disk_gib: float = 10


def thresholds(env: Mapping[str, str]) -> Thresholds:
    """The floors from `PF_MIN_MEM_GB`, `PF_WARN_MEM_GB`, `PF_MIN_CPU`, `PF_MIN_DISK_GB`: unset
    or empty is the default, any non-negative number is accepted, else `BadInput`."""
    default = Thresholds()
    return Thresholds(
        min_mem_gib=env_number(env, "PF_MIN_MEM_GB", default.min_mem_gib, zero_ok=True),
        warn_mem_gib=env_number(env, "PF_WARN_MEM_GB", default.warn_mem_gib, zero_ok=True),
        min_cpu=_whole(env, "PF_MIN_CPU", default.min_cpu),
        min_disk_gib=env_number(env, "PF_MIN_DISK_GB", default.min_disk_gib, zero_ok=True),
    )


# No machine has more CPUs than this; a longer number is a typo (and int() of thousands of
# digits raises instead of answering).
MAX_CPUS = 1_000_000


def _whole(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 7 and int(raw) <= MAX_CPUS):
        shown = raw if len(raw) <= 40 else raw[:39] + "…"
        raise BadInput(
            f"{name}={shown!r} is not a whole number of CPUs from 0 to {MAX_CPUS}",
            f"set {name} to a whole number such as {default}, or unset it",
        )
    return int(raw)


def env_version(env: Mapping[str, str], name: str, default: str) -> str:
    """The dotted version in variable `name` (2.1.5, 2.1.5.0); unset or empty: `default`."""
    value = env.get(name, "").strip() or default
    if not re.fullmatch(r"\d+\.\d+\.\d+(\.\d+)?", value):
        raise BadInput(f"{name}={value!r} is not a version such as {default}")
    return value


STORAGE_MODES = ("hostpath", "node-local")


MYSQL_ENGINES = ("auto", "5.7", "8.4")


DOCKER_HUB = "https://index.docker.io/v1/"


DEFAULT_CHART = "tracebloc/client"


DEFAULT_REPO_NAME = "tracebloc"


DEFAULT_REPO_URL = "https://tracebloc.github.io/client"


@dataclass(frozen=True)
class Proxy:
    host: str
    port: str
    username: str | None = None
    password: str | None = None


@dataclass(frozen=True)
class Registry:
    mirror: str | None
    username: str | None = None
    password: str | None = None
    server: str | None = None
    email: str = ""


@dataclass(frozen=True)
class PlanConfig:
    probe: ProbeConfig
    client_id: str | None
    client_password: str | None
    cleaned: tuple[str, ...]  # names of credentials that had pasted terminal garbage removed
    client_env: str | None
    proxy: Proxy | None
    no_proxy: str | None
    registry: Registry
    storage_mode: str
    mysql_engine: str
    chart: str
    chart_is_default: bool
    host_data_dir: str
    values_path: str
    values_given: bool  # TRACEBLOC_VALUES_FILE: use the caller's file as-is, render nothing
    host_dataset_dir: str | None = None  # HOST_DATASET_DIR, as given; checked by hostdirs
    # Set by commands/settings.build, once, for every command to read (none re-reads them):
    preflight_skipped: bool = False  # TRACEBLOC_SKIP_PREFLIGHT
    thresholds: Thresholds = Thresholds()  # the PF_* floors
    backend_url: str | None = None  # CLIENT_ENV's backend, or TRACEBLOC_BACKEND_URL
    ca_bundle: str | None = None  # the CA bundle's absolute path, known to hold PEM
    ca_variable: str = ""  # the variable it was given by (decide/network.CA_VARIABLES)
    # How install obtained the credentials (commands/credentials.py's origins): recorded.
    credentials_origin: str = ""

    @property
    def secrets(self) -> tuple[str | None, ...]:
        proxy_password = self.proxy.password if self.proxy else None
        return (self.client_password, self.registry.password, proxy_password)


# The CA bundle's variables, the first set one used (the rule: decide/network.py's docstring).
CA_VARIABLES = ("TRACEBLOC_CA_BUNDLE", "CURL_CA_BUNDLE")


def ca_variable(env: Mapping[str, str]) -> tuple[str, str] | None:
    """(variable, value as given) of the CA bundle in use: the first set of CA_VARIABLES."""
    for name in CA_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            return name, value
    return None


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")


# Tests only: loopback goes through the proxy, as a remote host would.
PROXY_LOOPBACK_SEAM = "TB_TEST_PROXY_LOOPBACK"


def proxy_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The proxy and NO_PROXY variables present in `env`, exactly as given (blank ones too:
    an empty NO_PROXY is not the same as none)."""
    found = {n: env[n] for n in PROXY_VARIABLES if n in env}
    seam = {PROXY_LOOPBACK_SEAM: env[PROXY_LOOPBACK_SEAM]} if env.get(PROXY_LOOPBACK_SEAM) else {}
    return found | {n: env[n] for n in NO_PROXY_VARIABLES if n in env} | seam


@dataclass(frozen=True)
class CredentialsGiven:
    """The unattended ways credentials come, as set: TRACEBLOC_CLIENT_ID and
    TRACEBLOC_CLIENT_PASSWORD (None: unset or empty; commands/credentials.obtain cleans and
    checks them), whether TRACEBLOC_VALUES_FILE is given, TRACEBLOC_CLIENT_LOCATION as typed
    (decide/signin.location cleans it)."""

    client_id: str | None = None
    password: str | None = field(default=None, repr=False)
    values_file: bool = False
    location: str = ""


def credentials_given(env: Mapping[str, str]) -> CredentialsGiven:
    return CredentialsGiven(
        client_id=env.get("TRACEBLOC_CLIENT_ID") or None,
        password=env.get("TRACEBLOC_CLIENT_PASSWORD") or None,
        values_file=bool(env.get("TRACEBLOC_VALUES_FILE", "").strip()),
        location=env.get("TRACEBLOC_CLIENT_LOCATION", ""),
    )


COLIMA_VARIABLES = ("COLIMA_MEMORY", "COLIMA_CPU", "COLIMA_DISK")


@dataclass(frozen=True)
class RuntimeGiven:
    """What the container runtime's install takes from the environment, as given: the
    COLIMA_* sizes (macOS), the proxy variables and TRACEBLOC_CA_BUNDLE for Docker's daemon
    (Linux; as given: the edge makes it absolute and asks whether it is a file)."""

    colima: Mapping[str, str]
    proxy: Mapping[str, str]
    ca_bundle: str = ""


def runtime_given(env: Mapping[str, str]) -> RuntimeGiven:
    """The variables, each checked for what a root-owned file cannot hold (`one_line`): they
    are written into systemd drop-ins, or name what is."""
    proxy = proxy_environment(env)
    for name, value in proxy.items():
        one_line(name, value)
    ca_bundle = one_line("TRACEBLOC_CA_BUNDLE", env.get("TRACEBLOC_CA_BUNDLE", "")).strip()
    return RuntimeGiven(
        colima={n: env[n] for n in COLIMA_VARIABLES if env.get(n, "").strip()},
        proxy={n: v for n, v in proxy.items() if v.strip()},
        ca_bundle=ca_bundle,
    )


# What no value written into a root-owned file may hold (a line break would start a line of
# its own, e.g. `ExecStartPre=`): refused, never escaped.
_NOT_IN_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def one_line(name: str, value: str) -> str:
    """`value` when it holds no control character, else BadInput naming the variable and the
    character (never the value: a proxy URL may hold a password)."""
    found = _NOT_IN_ONE_LINE.search(value)
    if found is None:
        return value
    code = ord(found.group())
    what = (
        f"a byte that is not UTF-8 (0x{code - 0xDC00:02X}"
        if 0xD800 <= code <= 0xDFFF
        else f"a control character (U+{code:04X}, a line break or similar"
    )
    raise BadInput(
        f"{name} holds {what}, at character {found.start() + 1}): it is not "
        "written into the system's files",
        f"set {name} again on one line, in UTF-8, without control characters",
    )


def prepare_user(env: Mapping[str, str]) -> str:
    """TB_PREPARE_USER as `prepare-host` grants it ("" = none named): one line, not an option
    (`-o` would be read by usermod as one), not root (who needs no group). Whether the
    account exists is asked by the edge that looks it up."""
    raw = env.get("TB_PREPARE_USER", "")
    name = one_line("TB_PREPARE_USER", raw).strip()
    if not name:
        return ""
    remedy = "set TB_PREPARE_USER to the login name of the person who will run the installer"
    if name.startswith("-") or any(c.isspace() or c in ":/," for c in name):
        raise BadInput(f"TB_PREPARE_USER={name!r} is not a user name", remedy)
    if name == "root":
        raise BadInput("TB_PREPARE_USER=root: root needs no docker group", remedy)
    return name


def split_proxy_url(raw: str) -> tuple[str, str | None, str]:
    """(scheme, userinfo or None, the rest) of a proxy URL, the scheme defaulting to http.

    Userinfo ends at the LAST `@`: a password may hold `@`, `:` and `/`."""
    text = raw.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "http", text
    userinfo, at, hostpart = rest.rpartition("@")
    return scheme, (userinfo if at else None), hostpart


DEFAULT_HELM_TIMEOUT_MIN = 10.0


DEFAULT_METRICS_WAIT_S = 120.0


DEFAULT_READY_TIMEOUT_S = 600.0  # a proxied laptop pulling several GB of images needs it


@dataclass(frozen=True)
class InstallSettings:
    helm_timeout_s: float
    metrics_wait_s: float
    # `kubectl config set-context --namespace` after a successful install.
    set_context_namespace: bool = True
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S
    # Re-apply even when nothing would change (TRACEBLOC_FORCE_REINSTALL, --force).
    force: bool = False


def env_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """The one yes/no parser (decide/yesno.flag), under the name config.py imports."""
    return flag(env, name, default)
