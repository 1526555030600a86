"""The hosts the network preflight probes: which this install needs (its backend, chart,
registries, tools and runtime), each as an Endpoint, and the tests' PF_CRITICALS list. Pure."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from installer.decide.errors import BadInput
from installer.decide.runtime import DOCKER_DOWNLOAD, RuntimePlan
from installer.decide.runtime_macos import HOMEBREW_URL

CRITICALS = "PF_CRITICALS"

# The chart's registries when no mirror is set; auth.docker.io is Docker Hub's token host.
REGISTRY_ENDPOINTS = (
    ("Docker Hub (registry-1.docker.io)", "https://registry-1.docker.io/v2/"),
    ("Docker Hub auth (auth.docker.io)", "https://auth.docker.io/token"),
    ("GitHub Container Registry (ghcr.io)", "https://ghcr.io/v2/"),
)
NVIDIA_REGISTRY = ("NVIDIA registry (nvcr.io)", "https://nvcr.io/v2/")
# The pinned tools' hosts when no TRACEBLOC_TOOLS_MIRROR is set.
OFFICIAL_TOOL_HOSTS = (
    "dl.k8s.io",
    "get.helm.sh",
    "github.com",
    "release-assets.githubusercontent.com",
)
# github.com redirects release downloads to this host, so it is probed whenever one is planned.
GITHUB_RELEASE_ASSETS = "https://release-assets.githubusercontent.com/"
# The container runtime's hosts (runtime_urls and decide/winhostnet.py say which are reached).
RUNTIME_LABELS = {
    "download.docker.com": "Docker packages",
    "desktop.docker.com": "Docker Desktop",
    "raw.githubusercontent.com": "Homebrew install",
    "github.com": "GitHub",
    "release-assets.githubusercontent.com": "GitHub release downloads",
    "api.github.com": "GitHub API (WSL releases)",
    "cdn.winget.microsoft.com": "winget source",
    "formulae.brew.sh": "Homebrew formulae",
    "ghcr.io": "Homebrew bottles",
}
DOCKER_PACKAGES = "https://download.docker.com/"
BREW_URLS = ("https://formulae.brew.sh/", "https://ghcr.io/v2/")
HOMEBREW_CLONE = "https://github.com/"


class Kind(str, enum.Enum):
    BACKEND = "backend"
    CHART = "chart"
    REGISTRY = "registry"
    TOOL = "tool"
    RUNTIME = "runtime"
    OTHER = "other"


@dataclass(frozen=True)
class Endpoint:
    label: str
    url: str
    strict: bool = False  # the answer must be 2xx/3xx; else any HTTP answer over verified TLS
    kind: Kind = Kind.OTHER
    well_known: bool = False  # a public host: a certificate not from a public CA is inspection

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 443

    @property
    def hostport(self) -> str:
        host = self.host
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"


def endpoints(
    backend: str,
    *,
    chart_repo: str | None,
    mirror: str | None,
    tool_urls: Iterable[str] = (),
    runtime: Iterable[str] = (),
    nvidia: bool = False,
) -> list[Endpoint]:
    """Every host this install needs, in one list: the backend the credentials go to, the
    chart repository (its index, strictly: the site root 404s by design), the registries the
    images come from (the mirror instead, when one is configured), the hosts of the tools
    that will be downloaded, the runtime's hosts when the runtime will be installed."""
    out = [
        Endpoint(
            f"tracebloc API ({urlsplit(backend).hostname})",
            backend,
            kind=Kind.BACKEND,
            well_known=True,
        )
    ]
    if chart_repo:
        out.append(
            Endpoint(
                f"tracebloc Helm charts ({urlsplit(chart_repo).hostname})",
                chart_repo.rstrip("/") + "/index.yaml",
                strict=True,
                kind=Kind.CHART,
                well_known=True,
            )
        )
    if mirror:
        host = mirror.split("/", 1)[0]  # a mirror may name a path: the registry is its host
        out.append(
            Endpoint(f"image registry mirror ({host})", f"https://{host}/v2/", kind=Kind.REGISTRY)
        )
    else:
        registries = [*REGISTRY_ENDPOINTS, *([NVIDIA_REGISTRY] if nvidia else [])]
        out += [
            Endpoint(label, url, kind=Kind.REGISTRY, well_known=True) for label, url in registries
        ]
    seen: set[str] = set()
    for url in with_redirects(tool_urls):
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname or parts.netloc in seen:
            continue
        seen.add(parts.netloc)
        out.append(
            Endpoint(
                f"tool download ({parts.hostname})",
                f"https://{parts.netloc}/",
                kind=Kind.TOOL,
                well_known=parts.hostname in OFFICIAL_TOOL_HOSTS,
            )
        )
    taken = {e.hostport for e in out}
    for url in with_redirects(runtime):  # runtime_urls(plan): empty unless it will be installed
        found = Endpoint("", url, kind=Kind.RUNTIME)
        if found.host and found.hostport not in taken:
            taken.add(found.hostport)
            name = RUNTIME_LABELS.get(found.host, "container runtime install")
            out.append(
                Endpoint(
                    f"{name} ({found.host})",
                    f"https://{urlsplit(url).netloc}/",
                    kind=Kind.RUNTIME,
                    well_known=found.host in RUNTIME_LABELS,
                )
            )
    return out


def github_release(url: str) -> bool:
    """A download from a GitHub release: github.com redirects it to GITHUB_RELEASE_ASSETS."""
    parts = urlsplit(url)
    return (
        parts.scheme == "https"
        and (parts.hostname or "").lower() == "github.com"
        and "/releases/download/" in parts.path
    )


def with_redirects(urls: Iterable[str]) -> list[str]:
    """`urls`, each GitHub release download followed by the host it is redirected to."""
    out: list[str] = []
    for url in urls:
        out += [url, GITHUB_RELEASE_ASSETS] if github_release(url) else [url]
    return out


def runtime_urls(plan: RuntimePlan | None, fetch_mirror: str | None = None) -> list[str]:
    """The hosts a runtime plan reaches, once each: what the engine downloads itself (or the
    TRACEBLOC_TOOLS_MIRROR base) and what its programs reach (Docker's repository for apt/dnf,
    ghcr.io for brew, github.com for Homebrew's installer). Distribution mirrors are not probed."""
    if plan is None or plan.refusal is not None:
        return []
    out: list[str] = []
    for step in plan.steps:
        if step.kind == "fetch" and step.url:
            if fetch_mirror is None:
                out.append(step.url)
            elif fetch_mirror:
                out.append(fetch_mirror)
            if step.url.startswith(DOCKER_DOWNLOAD):
                out.append(DOCKER_PACKAGES)  # the key or .repo file: the packages follow
            if step.url == HOMEBREW_URL:
                out.append(HOMEBREW_CLONE)
        if step.kind == "stage" and DOCKER_DOWNLOAD in step.content:
            out.append(DOCKER_PACKAGES)  # an apt source line naming Docker's repository
        if step.argv[:2] == ("brew", "install"):
            out += BREW_URLS
    return list(dict.fromkeys(out))


def parse_criticals(text: str, is_loopback: object) -> list[Endpoint]:
    """PF_CRITICALS, the scripts' `criticals` format: one `label|url[|strict]` per line (blank
    lines and `#` comments skipped). Honoured only when every URL is https:// to a loopback
    address (`is_loopback(host) -> bool`) or to a name under .invalid; anything else is BadInput. A label that says
    "registry" marks a registry (the mirror hint applies to it)."""
    check = is_loopback if callable(is_loopback) else (lambda _host: False)
    out: list[Endpoint] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [part.strip() for part in line.split("|")]
        if len(fields) not in (2, 3) or (len(fields) == 3 and fields[2] not in ("", "strict")):
            raise BadInput(f"{CRITICALS} line {number} is not label|url[|strict]")
        label, url = fields[0], fields[1]
        parts = urlsplit(url)
        try:
            host, _ = parts.hostname, parts.port
        except ValueError:
            host = None
        # A name under .invalid never resolves (RFC 6761): the tests' DNS failure.
        if parts.scheme != "https" or not host or not (check(host) or _invalid(host)):
            raise BadInput(
                f"{CRITICALS} is for tests only: every URL must be https:// to a "
                f"loopback address (line {number} is not)"
            )
        kind = Kind.REGISTRY if "registry" in label.lower() else Kind.OTHER
        out.append(
            Endpoint(
                label or host, url, strict=len(fields) == 3 and fields[2] == "strict", kind=kind
            )
        )
    return out


def _invalid(host: str) -> bool:
    return host.lower().rstrip(".").endswith(".invalid")
