"""The network preflight's decisions: what each probe's answer means and whether the install
may go on (the hosts probed: decide/endpoints.py). Pure.

The CA bundle (decide/settings.ca_variable: `TRACEBLOC_CA_BUNDLE`, else `CURL_CA_BUNDLE`) is
trusted in addition to the machine's store by every HTTPS client of the engine and by the
local cluster's nodes.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from installer.decide.endpoints import Endpoint, Kind

# Issuer organisations of the public CAs that sign the well-known hosts' certificates.
_PUBLIC_ISSUERS = re.compile(
    r"DigiCert|Sectigo|Comodo|Let'?s Encrypt|ISRG|Google Trust|GTS |GlobalSign|Amazon|"
    r"Entrust|GeoTrust|Baltimore|USERTrust|Actalis|Buypass|SSL\.com|Certum|IdenTrust|"
    r"Microsoft (Azure|RSA|ECC)|Starfield|Go Daddy|QuoVadis|Cloudflare",
    re.IGNORECASE,
)


class Status(str, enum.Enum):
    OK = "ok"
    DNS = "dns"  # the name does not resolve
    REFUSED = "refused"  # nothing listens (or a firewall rejects)
    TIMEOUT = "timeout"  # no answer within the bound (a blackhole, a dropping firewall)
    TLS = "tls"  # the certificate did not verify
    PROXY_AUTH = "proxy-auth"  # HTTP 407 from the proxy
    PROXY = "proxy"  # the proxy answered CONNECT with another refusal, or is unreachable
    HTTP = "http"  # strict: an answer that is not 2xx/3xx
    ERROR = "error"  # anything else (the connection broke off, not HTTP)
    UNCHECKED = "unchecked"  # not probed (an https:// proxy): no evidence either way


@dataclass(frozen=True)
class Probe:
    """One endpoint's answer after at most two attempts."""

    endpoint: Endpoint
    status: Status
    detail: str = ""  # one line, never a secret
    issuer: str = ""  # the issuer organisation (or CN) of the certificate served
    trusted_by: str = ""  # "system" or the CA variable's name, when TLS verified
    via_proxy: str = ""  # host:port of the proxy used, never its credentials
    http_status: int | None = None
    attempts: int = 1
    seconds: float = 0.0


@dataclass(frozen=True)
class Profile:
    proxy: str  # host:port, or "" for none
    ca_variable: str  # the CA variable in use, or ""
    ca_path: str
    inspection: str  # yes / no / unknown
    issuer: str  # what the inspection verdict is based on


@dataclass(frozen=True)
class Report:
    profile: Profile
    probes: tuple[Probe, ...]
    hints: tuple[str, ...]
    stop: bool
    source: str = "plan"  # "plan" (derived) or PF_CRITICALS
    skipped: bool = False
    failures: tuple[str, ...] = field(default_factory=tuple)  # "host:port: what failed"


def is_public_issuer(issuer: str) -> bool:
    return bool(issuer) and bool(_PUBLIC_ISSUERS.search(issuer))


def inspection(probes: Sequence[Probe]) -> tuple[str, str]:
    """(yes / no / unknown, the issuer seen). Yes: a certificate seen through the proxy or
    on a well-known host failed verification or verified only with the configured CA, or a
    well-known host's certificate is not from a public CA. No: such a certificate verified
    against this machine's own trust store. Unknown: no such certificate was seen."""
    seen = [p for p in probes if p.via_proxy or p.endpoint.well_known]
    for p in seen:
        if p.issuer and (
            p.status is Status.TLS
            or (p.trusted_by not in ("", "system"))
            or (p.endpoint.well_known and not is_public_issuer(p.issuer))
        ):
            return "yes", p.issuer
    for p in seen:
        if p.trusted_by == "system":
            return "no", p.issuer
    return "unknown", ""


def failure_words(probe: Probe) -> str:
    """What failed, in the words of the report (the host is named by the caller)."""
    e = probe.endpoint
    if probe.status is Status.DNS:
        return f"the name {e.host} does not resolve (DNS)"
    if probe.status is Status.REFUSED:
        return "connection refused"
    if probe.status is Status.TIMEOUT:
        return f"no answer within the time allowed (timeout){_extra(probe.detail)}"
    if probe.status is Status.TLS:
        issuer = probe.issuer or "an unknown issuer"
        through = f" through the proxy {probe.via_proxy}" if probe.via_proxy else ""
        if probe.via_proxy or e.well_known:
            return (
                f"TLS verification failed{through}: the certificate is issued by {issuer}, "
                "which this machine does not trust (TLS inspection)"
            )
        return (
            f"TLS verification failed: the certificate is issued by {issuer}{_extra(probe.detail)}"
        )
    if probe.status is Status.PROXY_AUTH:
        return f"the proxy {probe.via_proxy} refused its credentials (HTTP 407 Proxy Authentication Required)"
    if probe.status is Status.PROXY:
        return f"the proxy {probe.via_proxy} did not connect to it{_extra(probe.detail)}"
    if probe.status is Status.HTTP:
        return f"answered HTTP {probe.http_status}, not 2xx/3xx"
    return f"the connection failed{_extra(probe.detail)}"


def _extra(detail: str) -> str:
    return f" ({detail})" if detail else ""


def report_for(
    profile: Profile, probes: Sequence[Probe], *, mirror: str | None, source: str = "plan"
) -> Report:
    """The report: every needed host that failed is a stop (a registry too: the install
    would end in ImagePullBackOff), with the hints for what failed."""
    failed = [p for p in probes if p.status not in (Status.OK, Status.UNCHECKED)]
    failures = tuple(f"{p.endpoint.hostport}: {failure_words(p)}" for p in failed)
    hints: list[str] = []
    statuses = {p.status for p in failed}
    if statuses & {
        Status.DNS,
        Status.REFUSED,
        Status.TIMEOUT,
        Status.PROXY,
        Status.HTTP,
        Status.ERROR,
    }:
        hosts = ", ".join(dict.fromkeys(p.endpoint.host for p in failed))
        hints.append(
            f"allow outbound HTTPS (port 443) to {hosts}"
            + (
                ""
                if profile.proxy
                else ", or set HTTPS_PROXY (and HTTP_PROXY) "
                "to your organisation's proxy, e.g. http://proxy.example:3128"
            )
        )
    if Status.TLS in statuses:
        issuer = next((p.issuer for p in failed if p.status is Status.TLS and p.issuer), "")
        named = f" (certificates re-signed by {issuer})" if issuer else ""
        hints.append(
            f"this network inspects TLS{named}: set TRACEBLOC_CA_BUNDLE "
            "to a PEM file holding your organisation's root CA (CURL_CA_BUNDLE is "
            "read too, after it); it is added to this machine's trust store, "
            "not put in its place"
        )
    if Status.PROXY_AUTH in statuses:
        hints.append(
            "give the proxy's user name and password in HTTPS_PROXY/HTTP_PROXY "
            "(http://user:password@host:port, taken as typed)"
        )
    # A mirror helps a registry the network blocks; one it inspects needs the CA instead.
    if any(
        p.endpoint.kind is Kind.REGISTRY and p.status not in (Status.TLS, Status.PROXY_AUTH)
        for p in failed
    ):
        hints.append(
            "the container registries cannot be reached from here"
            + (f" (the mirror {mirror} included)" if mirror else "")
            + ": set TRACEBLOC_IMAGE_REGISTRY to a registry mirror this network "
            "reaches (with TRACEBLOC_REGISTRY_USERNAME/PASSWORD when it needs a login)"
        )
    return Report(
        profile, tuple(probes), tuple(hints), stop=bool(failed), source=source, failures=failures
    )


def skipped_report() -> Report:
    return Report(Profile("", "", "", "unknown", ""), (), (), stop=False, skipped=True)
