"""Probe HTTPS endpoints the way the install will reach them: through its proxy
(backend.proxy_for) and trusting what it trusts (backend.ssl_context).

Raw sockets and `ssl`, so the report can name the failure's class and the issuer of a
certificate that did not verify. All endpoints at once, each bounded and retried once, the
whole bounded by a join deadline. A password is sent only to the proxy, never returned.
"""

from __future__ import annotations

import base64
import logging
import socket
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import unquote, urlsplit

from installer import __version__
from installer.decide.endpoints import Endpoint
from installer.decide.network import Probe, Status
from installer.decide.settings import proxy_environment
from installer.edges.trust import proxy_for, ssl_context

log = logging.getLogger(__name__)

ATTEMPT_S = 3.0  # one attempt: connect, CONNECT, handshake, first answer line
_RETRIED = {Status.DNS, Status.REFUSED, Status.TIMEOUT, Status.PROXY, Status.ERROR}
_MAX_HEAD = 64 * 1024


class _Fail(Exception):
    def __init__(
        self, status: Status, detail: str = "", issuer: str = "", http_status: int | None = None
    ) -> None:
        super().__init__(status.value)
        self.status, self.detail, self.issuer, self.http_status = (
            status,
            detail,
            issuer,
            http_status,
        )


@dataclass(frozen=True)
class Trust:
    system: ssl.SSLContext  # this machine's trust store alone
    bundle: ssl.SSLContext | None  # the store plus the configured CA bundle
    variable: str  # the CA variable's name, or ""


def trust(ca_path: str | None, variable: str) -> Trust:
    return Trust(
        ssl_context(None), ssl_context(ca_path) if ca_path else None, variable if ca_path else ""
    )


def probe_all(
    endpoints: Sequence[Endpoint],
    env: Mapping[str, str],
    trusted: Trust,
    *,
    attempt_s: float = ATTEMPT_S,
) -> list[Probe]:
    """Every endpoint at once; the answers in the endpoints' order, within about two
    attempts' time in total."""
    results: list[Probe | None] = [None] * len(endpoints)

    def work(index: int, endpoint: Endpoint) -> None:
        results[index] = probe(endpoint, env, trusted, attempt_s=attempt_s)

    threads = [
        threading.Thread(target=work, args=(i, e), name=f"netprobe-{i}", daemon=True)
        for i, e in enumerate(endpoints)
    ]
    for thread in threads:
        thread.start()
    until = time.monotonic() + 2 * attempt_s + 1.0
    for thread in threads:
        while thread.is_alive() and time.monotonic() < until:
            thread.join(0.1)  # short waits: Ctrl-C is delivered between them
    out = []
    for endpoint, result in zip(endpoints, results, strict=True):
        if result is None:
            proxy = proxy_for(endpoint.url, proxy_environment(env))
            result = Probe(
                endpoint,
                Status.TIMEOUT,
                "the lookup or connection did not finish",
                via_proxy=_hostport(proxy) if proxy else "",
                attempts=2,
                seconds=2 * attempt_s,
            )
        out.append(result)
    return out


def probe(
    endpoint: Endpoint, env: Mapping[str, str], trusted: Trust, *, attempt_s: float = ATTEMPT_S
) -> Probe:
    """One endpoint, tried once more when the first try failed for a reason that may pass."""
    started = time.monotonic()
    first = _probe_once(endpoint, env, trusted, attempt_s)
    if first.status not in _RETRIED:
        return replace(first, seconds=time.monotonic() - started)
    second = _probe_once(endpoint, env, trusted, attempt_s)
    return replace(second, attempts=2, seconds=time.monotonic() - started)


def _probe_once(
    endpoint: Endpoint, env: Mapping[str, str], trusted: Trust, attempt_s: float
) -> Probe:
    proxy = proxy_for(endpoint.url, proxy_environment(env))
    via = _hostport(proxy) if proxy else ""
    until = time.monotonic() + attempt_s
    try:
        if proxy and urlsplit(proxy).scheme.lower() != "http":
            return Probe(
                endpoint, Status.UNCHECKED, "an https:// proxy is not probed", via_proxy=via
            )
        tls, trusted_by = _handshake(endpoint, proxy, trusted, until)
        with tls:
            issuer = _issuer_of(tls.getpeercert() or {})
            status = _http_status(tls, endpoint, until)
    except _Fail as failed:
        return Probe(
            endpoint,
            failed.status,
            failed.detail,
            issuer=failed.issuer,
            via_proxy=via,
            http_status=failed.http_status,
        )
    except Exception as exc:  # a bug below must not stop the install: say what it was
        log.debug("netprobe: unexpected failure for %s", endpoint.url, exc_info=exc)
        return Probe(endpoint, Status.ERROR, type(exc).__name__, via_proxy=via)
    if endpoint.strict and not 200 <= status < 400:
        return Probe(
            endpoint,
            Status.HTTP,
            issuer=issuer,
            trusted_by=trusted_by,
            via_proxy=via,
            http_status=status,
        )
    return Probe(
        endpoint, Status.OK, issuer=issuer, trusted_by=trusted_by, via_proxy=via, http_status=status
    )


def _handshake(
    endpoint: Endpoint, proxy: str | None, trusted: Trust, until: float
) -> tuple[ssl.SSLSocket, str]:
    """A verified TLS connection and who made it verify ("system" or the CA variable);
    a certificate that verifies with neither is _Fail(TLS) naming its issuer."""
    tries: list[tuple[ssl.SSLContext, str]] = [(trusted.system, "system")]
    if trusted.bundle is not None:
        tries.append((trusted.bundle, trusted.variable))
    reason = ""
    for context, who in tries:
        sock = _tunnel(endpoint, proxy, until)
        try:
            return _wrap(context, sock, endpoint, until), who
        except ssl.SSLCertVerificationError as exc:
            reason = exc.verify_message or "certificate verify failed"
            sock.close()
    issuer = _served_issuer(endpoint, proxy, until)
    raise _Fail(Status.TLS, reason, issuer=issuer)


def _wrap(
    context: ssl.SSLContext, sock: socket.socket, endpoint: Endpoint, until: float
) -> ssl.SSLSocket:
    try:
        sock.settimeout(_left(until))
        return context.wrap_socket(sock, server_hostname=endpoint.host)
    except ssl.SSLCertVerificationError:
        raise
    except TimeoutError:
        sock.close()
        raise _Fail(Status.TIMEOUT, "no TLS answer") from None
    except (ssl.SSLError, OSError) as exc:
        sock.close()
        raise _Fail(Status.ERROR, f"TLS handshake failed: {_short(exc)}") from None


def _served_issuer(endpoint: Endpoint, proxy: str | None, until: float) -> str:
    """The issuer of the certificate served, read over an unverified handshake that sends
    nothing and is closed at once."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        sock = _tunnel(endpoint, proxy, until)
        with _wrap(context, sock, endpoint, until) as tls:
            der = tls.getpeercert(binary_form=True)
    except (_Fail, ssl.SSLError, OSError):
        return ""
    return der_issuer(der) if der else ""


def _tunnel(endpoint: Endpoint, proxy: str | None, until: float) -> socket.socket:
    """A TCP connection to the endpoint: direct, or through the proxy's CONNECT."""
    if not proxy:
        return _connect(endpoint.host, endpoint.port, until, through="")
    parts = urlsplit(proxy)
    sock = _connect(parts.hostname or "", parts.port or 80, until, through=_hostport(proxy))
    try:
        target = endpoint.hostport
        head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
        head += f"User-Agent: tracebloc-installer/{__version__}\r\n"
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            head += f"Proxy-Authorization: Basic {base64.b64encode(pair.encode()).decode()}\r\n"
        sock.settimeout(_left(until))
        sock.sendall((head + "\r\n").encode("utf-8"))
        code, reason = _read_head(sock)
    except TimeoutError:
        sock.close()
        raise _Fail(
            Status.TIMEOUT, f"the proxy {_hostport(proxy)} did not answer CONNECT"
        ) from None
    except OSError as exc:
        sock.close()
        raise _Fail(Status.PROXY, _short(exc)) from None
    except _Fail:
        sock.close()
        raise
    if code == 407:
        sock.close()
        raise _Fail(Status.PROXY_AUTH, http_status=407)
    if code != 200:
        sock.close()
        raise _Fail(
            Status.PROXY,
            f"CONNECT answered HTTP {code}{' ' + reason if reason else ''}",
            http_status=code,
        )
    return sock


def _connect(host: str, port: int, until: float, *, through: str) -> socket.socket:
    """A connected socket. `through`: the proxy's host:port, when it is the proxy that
    fails (its failure is then PROXY: the endpoint itself was never tried)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        if through:
            raise _Fail(Status.PROXY, f"the proxy's name {host} does not resolve") from None
        raise _Fail(Status.DNS) from None
    except UnicodeError:
        raise _Fail(Status.DNS, "not a valid host name") from None
    last: Exception | None = None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_left(until))
            sock.connect(address)
            return sock
        except TimeoutError as exc:
            sock.close()
            last = exc
        except OSError as exc:
            sock.close()
            last = exc
        if time.monotonic() >= until:
            break
    if isinstance(last, (TimeoutError, socket.timeout)):
        if through:
            raise _Fail(Status.PROXY, f"the proxy {through} did not answer")
        raise _Fail(Status.TIMEOUT)
    if isinstance(last, ConnectionRefusedError):
        if through:
            raise _Fail(Status.PROXY, f"the proxy {through} refused the connection")
        raise _Fail(Status.REFUSED)
    raise _Fail(Status.PROXY if through else Status.ERROR, _short(last) if last else "no address")


def _http_status(tls: ssl.SSLSocket, endpoint: Endpoint, until: float) -> int:
    parts = urlsplit(endpoint.url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"User-Agent: tracebloc-installer/{__version__}\r\n"
        "Accept: */*\r\nConnection: close\r\n\r\n"
    )
    try:
        tls.settimeout(_left(until))
        tls.sendall(request.encode("ascii"))
        code, _ = _read_head(tls)
    except TimeoutError:
        raise _Fail(Status.TIMEOUT, "TLS was set up but no HTTP answer came") from None
    except OSError as exc:
        raise _Fail(Status.ERROR, f"the connection broke off: {_short(exc)}") from None
    return code


def _read_head(sock: socket.socket) -> tuple[int, str]:
    """The status code and reason of an HTTP answer's head (read up to the blank line)."""
    data = b""
    while b"\r\n\r\n" not in data and b"\n\n" not in data and len(data) < _MAX_HEAD:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    line = data.split(b"\n", 1)[0].decode("latin-1").strip()
    fields = line.split(" ", 2)
    if len(fields) < 2 or not fields[0].startswith("HTTP/") or not fields[1].isdigit():
        raise _Fail(Status.ERROR, "the answer is not HTTP" if data else "closed without an answer")
    return int(fields[1]), fields[2] if len(fields) > 2 else ""


# --- certificates --------------------------------------------------------------------------


def _issuer_of(cert: Mapping[str, object]) -> str:
    names: dict[str, str] = {}
    issuer = cert.get("issuer") or ()
    for rdn in issuer if isinstance(issuer, tuple) else ():
        for key, value in rdn:
            names.setdefault(key, value)
    return names.get("organizationName") or names.get("commonName") or ""


_O, _CN = bytes.fromhex("55040a"), bytes.fromhex("550403")


def der_issuer(der: bytes) -> str:
    """The issuer's organisation (else common name) of a DER certificate; "" when the
    bytes are not one. Enough DER for X.509's fixed prefix, nothing more."""
    try:
        _, start, _ = _tlv(der, 0)  # Certificate
        _, at, _ = _tlv(der, start)  # TBSCertificate
        tag, _, end = _tlv(der, at)
        if tag == 0xA0:  # [0] version
            tag, _, end = _tlv(der, end)
        _, _, end = _tlv(der, end)  # serial (already read) -> signature algorithm
        _, name_start, name_end = _tlv(der, end)  # issuer Name
        found: dict[bytes, str] = {}
        at = name_start
        while at < name_end:
            _, set_start, set_end = _tlv(der, at)
            inner = set_start
            while inner < set_end:
                _, seq_start, seq_end = _tlv(der, inner)
                _, oid_start, oid_end = _tlv(der, seq_start)
                _, value_start, value_end = _tlv(der, oid_end)
                found.setdefault(
                    der[oid_start:oid_end], der[value_start:value_end].decode("utf-8", "replace")
                )
                inner = seq_end
            at = set_end
        return found.get(_O) or found.get(_CN) or ""
    except (IndexError, ValueError):
        return ""


def _tlv(der: bytes, at: int) -> tuple[int, int, int]:
    """(tag, content start, content end) of the DER element at `at`."""
    tag, length = der[at], der[at + 1]
    at += 2
    if length & 0x80:
        count = length & 0x7F
        if not 0 < count <= 4:
            raise ValueError("bad DER length")
        length = int.from_bytes(der[at : at + count], "big")
        at += count
    if at + length > len(der):
        raise ValueError("DER element runs past the end")
    return tag, at, at + length


# --- small helpers -------------------------------------------------------------------------


def _hostport(proxy: str) -> str:
    """host:port of a proxy URL, without its credentials."""
    parts = urlsplit(proxy)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def _left(until: float) -> float:
    return max(0.05, until - time.monotonic())


def _short(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())[:160]
