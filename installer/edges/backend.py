"""The one HTTP call the installer makes: does the backend accept this client id and password?

The only importer of `requests`, on first use. TLS always verified against the OS store
(`truststore`) plus the CA bundle; proxies from the `env` passed in, never `os.environ`.
Nothing here logs, returns or raises the password.
"""

from __future__ import annotations

import enum
import logging
import socket
import ssl
import threading
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from installer import __version__
from installer.decide.errors import BadInput
from installer.decide.redact import Redactor
from installer.decide.settings import proxy_environment
from installer.edges.trust import (
    CA_BUNDLE,
    ca_bundle,
    is_loopback,
    netloc,
    proxy_for,
    proxy_userinfo,
    ssl_context,
)

if TYPE_CHECKING:
    from requests import Response, Session

log = logging.getLogger(__name__)

DEFAULT_BACKEND = "https://api.tracebloc.io/"
BACKENDS = {"dev": "https://dev-api.tracebloc.io/", "stg": "https://stg-api.tracebloc.io/"}
ENDPOINT = "api-token-auth/"
OVERRIDE = "TRACEBLOC_BACKEND_URL"


class Verdict(str, enum.Enum):
    VALID = "valid"  # 200
    REJECTED = "rejected"  # 400: wrong client id or password
    INACTIVE = "inactive"  # 401: the account exists but is not active
    UNVERIFIED = "unverified"  # anything else: the check could not be made


@dataclass(frozen=True)
class Check:
    verdict: Verdict
    detail: str = ""  # one line saying why, for UNVERIFIED


# --- where ---------------------------------------------------------------------------------


def backend_url(client_env: str | None, env: Mapping[str, str]) -> str:
    """The backend base URL (ending in `/`) for a parsed `CLIENT_ENV`; `TRACEBLOC_BACKEND_URL`
    overrides it: https only, except plain http to a loopback host (the tests' server)."""
    raw = env.get("TRACEBLOC_BACKEND_URL", "").strip()
    if not raw:
        key = (client_env or "").strip().lower()
        key = {"development": "dev", "staging": "stg"}.get(key, key)
        return BACKENDS.get(key, DEFAULT_BACKEND)
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    try:
        host, _ = parts.hostname, parts.port  # .port raises on a port that is not a number
    except ValueError:
        host = None
    if scheme not in ("https", "http") or not host or parts.query or parts.fragment:
        raise BadInput(f"{OVERRIDE}={raw!r} is not a URL like https://host[:port]/[path/]")
    if parts.username is not None:
        raise BadInput(f"{OVERRIDE} must not contain a user name or password")
    if scheme == "http" and not is_loopback(host):
        raise BadInput(f"{OVERRIDE}={raw!r} must use https:// (plain http only to localhost)")
    return raw if raw.endswith("/") else raw + "/"


def endpoint(url: str) -> str:
    return url.rstrip("/") + "/" + ENDPOINT


# --- trust ---------------------------------------------------------------------------------


# --- proxies -------------------------------------------------------------------------------


# --- the check -----------------------------------------------------------------------------

_VERDICTS = {200: Verdict.VALID, 400: Verdict.REJECTED, 401: Verdict.INACTIVE}


def verify(
    url: str, username: str, password: str, *, env: Mapping[str, str], timeout: float = 20.0
) -> Check:
    """POST `username` and `password` to `<url>api-token-auth/`: 200 VALID, 400 REJECTED, 401
    INACTIVE, anything else UNVERIFIED with a reason. Bounded by `timeout`, name resolution
    included; BadInput only for a bad `TRACEBLOC_CA_BUNDLE`."""
    target = endpoint(url)
    context = ssl_context(ca_bundle(env))
    proxy = proxy_for(target, proxy_environment(env))
    log.debug("backend: POST %s%s", target, f" via proxy {netloc(proxy)}" if proxy else "")

    outcome: list[Response | BaseException] = []

    def call() -> None:
        try:
            outcome.append(_post(target, username, password, context, proxy, timeout))
        except BaseException as exc:  # handed to the waiting thread
            outcome.append(exc)

    # requests bounds each socket operation, not name resolution nor a trickling answer:
    # the thread makes the bound hold for the whole call.
    worker = threading.Thread(target=call, name="backend-check", daemon=True)
    worker.start()
    deadline = time.monotonic() + timeout + 1.0
    while worker.is_alive() and time.monotonic() < deadline:
        worker.join(0.1)  # short waits: Ctrl-C is delivered between them on every platform
    if not outcome:
        check = Check(Verdict.UNVERIFIED, f"no answer from {_site(target)} within {timeout:g}s")
    elif isinstance(outcome[0], BaseException):
        # A library's words may end up in the detail: no secret may pass with them.
        redact = Redactor(
            [password, quote(password, safe=""), *proxy_userinfo(proxy_environment(env))]
        )
        check = _failure(outcome[0], target, proxy, timeout, redact)
    else:
        check = _answer(outcome[0])
    check = Check(check.verdict, _one_line(check.detail))
    log.debug("backend: %s%s", check.verdict.value, f" ({check.detail})" if check.detail else "")
    return check


def http() -> ModuleType:
    """`requests`, imported here only, on first use, with its missing-charset warning ignored
    (not via `-W`: the frozen interpreter would then swallow an early Ctrl-C)."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="Unable to find acceptable character detection dependency"
        )
        import requests
    return requests


def session(context: ssl.SSLContext, retries: Any = None) -> Session:
    """A requests session trusting exactly `context`, reading nothing from the process environment
    (proxies via `proxy_for`). `retries`: a urllib3 `Retry` or None. Also edges/download.py's."""
    requests = http()
    base: Any = requests.adapters.HTTPAdapter

    class Adapter(base):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            kwargs["ssl_context"] = context
            super().init_poolmanager(*args, **kwargs)

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
            kwargs["ssl_context"] = context  # urllib3 uses it for an https:// proxy too
            return super().proxy_manager_for(proxy, **kwargs)

        def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
            # Trust is the context's alone: requests would load certifi's bundle into it.
            conn.cert_reqs = "CERT_REQUIRED"

    out = requests.Session()
    out.trust_env = False  # no ~/.netrc, no os.environ proxies or CA bundle
    adapter = Adapter(max_retries=retries) if retries is not None else Adapter()
    out.mount("https://", adapter)
    out.mount("http://", adapter)
    return out


def _post(
    target: str,
    username: str,
    password: str,
    context: ssl.SSLContext,
    proxy: str | None,
    timeout: float,
) -> Response:
    with session(context) as open_session:
        response = open_session.post(
            target,
            data={"username": username, "password": password},
            headers={"User-Agent": f"tracebloc-installer/{__version__}"},
            proxies={"http": proxy, "https": proxy} if proxy else {},
            timeout=(timeout, timeout),  # per socket operation; `verify` bounds the whole
            allow_redirects=False,  # the password goes to this URL and nowhere else
            stream=True,  # the status is the answer; the body is never read
        )
        response.close()
        return response


def _answer(response: Response) -> Check:
    status = response.status_code
    if status in _VERDICTS:
        return Check(_VERDICTS[status])
    reason = f"HTTP {status}" + (f" {response.reason}" if response.reason else "")
    if 300 <= status < 400 and response.headers.get("Location"):
        reason += f" (redirect to {response.headers['Location']}, not followed)"
    return Check(Verdict.UNVERIFIED, f"{reason} from {response.url}")


def _failure(
    exc: BaseException, target: str, proxy: str | None, timeout: float, redact: Redactor
) -> Check:
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    requests = http()

    site = _site(target)
    chain = _chain(exc)
    if isinstance(exc, requests.exceptions.Timeout):
        detail = f"no answer from {site} within {timeout:g}s"
    elif isinstance(exc, requests.exceptions.ProxyError):
        detail = f"could not use the proxy {netloc(proxy or '')}: {_reason(chain, redact)}"
    elif any(isinstance(e, ssl.SSLCertVerificationError) for e in chain):
        detail = (
            f"the TLS certificate of {site} is not trusted: {_reason(chain, redact)} "
            f"(behind a TLS-inspecting proxy, set {CA_BUNDLE} to its root CA's PEM file)"
        )
    elif isinstance(exc, requests.exceptions.RequestException):
        detail = f"could not reach {site}: {_reason(chain, redact)}"
    else:  # a bug in the layers below must not stop the install: the check is advisory
        log.debug("backend: unexpected failure", exc_info=exc)
        detail = f"could not check with {site}: {type(exc).__name__}"
    return Check(Verdict.UNVERIFIED, detail)


def failure_detail(
    exc: BaseException, target: str, proxy: str | None, timeout: float, redact: Redactor
) -> str:
    """One line saying why a request to `target` failed (the downloader words failures
    exactly as the credentials check does)."""
    return _one_line(_failure(exc, target, proxy, timeout, redact).detail)


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything it wraps (urllib3's `reason`, causes, contexts, args)."""
    seen: set[int] = set()
    chain: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        chain.append(current)
        nested = [
            getattr(current, "reason", None),
            current.__cause__,
            current.__context__,
            *(a for a in current.args if isinstance(a, BaseException)),
        ]
        todo.extend(n for n in nested if isinstance(n, BaseException))
    return chain


def _reason(chain: list[BaseException], redact: Redactor) -> str:
    """The innermost cause of a requests/urllib3 failure, in a few words."""
    import http.client  # loaded by requests already; not at startup

    for item in chain:
        if isinstance(item, ssl.SSLCertVerificationError):
            return str(item.verify_message or item.reason or "certificate verify failed")
    for item in chain:
        if isinstance(item, ConnectionRefusedError):
            return "connection refused"
        if isinstance(item, socket.gaierror):
            return "the host name could not be resolved"
        if isinstance(item, http.client.RemoteDisconnected):
            return "the connection was closed without an answer"
        if isinstance(item, http.client.BadStatusLine):
            return "the answer was not HTTP"
        if isinstance(item, ssl.SSLError) and item.reason:
            return f"TLS failed ({item.reason})"
    for item in reversed(chain):
        if isinstance(item, OSError) and item.strerror:
            return item.strerror[:1].lower() + item.strerror[1:]
    # Not ours to word: a library's text, printable characters only, and no secret in it.
    text = redact("".join(c for c in str(chain[-1]) if c.isprintable()).strip())
    return text[:200] or type(chain[-1]).__name__


def _one_line(text: str) -> str:
    """One line of printable text, whatever a server or a library put in it."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _site(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/"
