"""How the engine reaches an HTTPS host, for every HTTPS client it has (the credential check,
the downloads, the network preflight): what it trusts (the OS trust store plus the one CA
bundle, decide/settings.ca_variable) and which proxy it goes through (the proxy variables,
NO_PROXY matched as Go's tools match it). No HTTP here: edges/backend.py and edges/download.py
send the requests."""

from __future__ import annotations

import ipaddress
import logging
import os
import ssl
from collections.abc import Mapping
from urllib.parse import quote, urlsplit

from installer.decide import noproxy
from installer.decide.errors import BadInput, InstallerError
from installer.decide.settings import PROXY_LOOPBACK_SEAM, ca_variable, split_proxy_url

CA_BUNDLE = "TRACEBLOC_CA_BUNDLE"

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ca_bundle(env: Mapping[str, str]) -> str | None:
    """The CA bundle (decide/settings.ca_variable: `TRACEBLOC_CA_BUNDLE`, else
    `CURL_CA_BUNDLE`) as an absolute path, once it is known to hold PEM certificates."""
    chosen = ca_variable(env)
    if chosen is None:
        return None
    name, raw = chosen
    path = os.path.abspath(os.path.expanduser(raw))
    pem = _read_pem(path, raw, name)
    try:
        ssl.create_default_context().load_verify_locations(cadata=pem)
    except (OSError, ValueError):  # ssl.SSLError is an OSError too
        raise BadInput(
            f"{name}={raw!r} holds no PEM certificate",
            "point it at a PEM file (-----BEGIN CERTIFICATE-----) "
            "holding your organisation's root CA",
        ) from None
    return path


# A CA bundle is a few hundred kilobytes (the whole Mozilla store is ~250 KB).
MAX_CA_BUNDLE_BYTES = 4 * 2**20


def _read_pem(path: str, raw: str, name: str) -> str:
    """The bundle's text, read like every file the engine reads (edges/files.py): a FIFO,
    a device or a huge file is bad input, never a hang."""
    from installer.edges import files

    remedy = "point it at a PEM file holding your organisation's root CA"
    try:
        data = files.read_bounded(path, limit=MAX_CA_BUNDLE_BYTES, what="a PEM file", remedy=remedy)
    except files.NotRegular:
        raise BadInput(f"{name}={raw!r} is not a file", remedy) from None
    except InstallerError as exc:
        raise BadInput(f"{name}={raw!r}: {exc.message}", remedy) from None
    if data is None:
        raise BadInput(f"{name}={raw!r} is not a file", remedy)
    return data.decode("ascii", "ignore")  # PEM is ASCII; cadata takes bytes as DER


def ssl_context(cafile: str | None) -> ssl.SSLContext:
    """The OS trust store (truststore) plus `cafile`; certifi's bundle where truststore
    cannot be used. Hostname checking and CERT_REQUIRED are the defaults of both."""
    context: ssl.SSLContext
    try:
        import truststore

        context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    except (ImportError, OSError, RuntimeError) as exc:
        log.debug("truststore unavailable (%s): using certifi's CA bundle", exc)
        try:
            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
        except (ImportError, OSError):
            context = ssl.create_default_context()
    if cafile:
        context.load_verify_locations(cadata=_read_pem(cafile, cafile, "the CA bundle"))
    return context


def proxy_for(url: str, proxy: Mapping[str, str]) -> str | None:
    """The proxy URL to reach `url` through, from the proxy variables as given (`proxy`:
    decide/settings.proxy_environment); None to go direct."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        return None
    # The installer has one proxy (the chart gets one too, see config.parse_proxy): the
    # URL's own scheme's variables first, then the other scheme's.
    given = [
        proxy.get(n, "").strip() for n in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
    ]
    raw = next((v for v in (given if scheme == "https" else given[2:] + given[:2]) if v), "")
    if not raw:
        return None
    no_proxy = (proxy.get("NO_PROXY") or proxy.get("no_proxy") or "").strip()
    port = parts.port or (443 if scheme == "https" else 80)
    if noproxy.bypassed(
        parts.hostname or "", port, no_proxy, loopback_direct=not proxy.get(PROXY_LOOPBACK_SEAM)
    ):
        return None
    scheme, userinfo, hostpart = split_proxy_url(raw)
    hostpart = hostpart.split("/", 1)[0]
    if userinfo is None:
        return f"{scheme}://{hostpart}"
    # Taken literally, as the chart takes it (config.parse_proxy): quoted here because
    # requests unquotes the user and password of a proxy URL.
    user, _, password = userinfo.partition(":")
    return f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@{hostpart}"


def bypass_proxy(host: str, port: int, no_proxy: str) -> bool:
    """Does NO_PROXY exempt `host`:`port`? As Go's tools read it (decide/noproxy.py)."""
    return noproxy.bypassed(host, port, no_proxy)


def netloc(url: str) -> str:
    """host[:port] of a URL, without any user name or password."""
    return urlsplit(url).netloc.rpartition("@")[2]


def proxy_userinfo(proxy: Mapping[str, str]) -> list[str]:
    """Every proxy `user:password@` in `proxy` (the proxy variables as given), as typed and
    as quoted for requests."""
    found = []
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        userinfo = split_proxy_url(proxy.get(name, ""))[1]
        if userinfo:
            user, _, password = userinfo.partition(":")
            found += [userinfo + "@", f"{quote(user, safe='')}:{quote(password, safe='')}@"]
    return found
