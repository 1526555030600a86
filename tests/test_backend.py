"""The credential check against a real loopback HTTP(S) server: verdicts, failures, the form
fields as received, proxies from the env mapping, and TLS with an explicit CA."""

from __future__ import annotations

import base64
import logging
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from installer.decide.errors import BadInput
from installer.decide.settings import proxy_environment
from installer.edges.backend import Check, Verdict, backend_url, verify
from installer.edges.trust import bypass_proxy, ca_bundle, proxy_for, ssl_context
from tests.fakes.backend_server import GARBAGE, HANG_UP, BackendServer, Reply

PASSWORD = "s3cr&t=%20 pässwörd+/?#"


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- which backend -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client_env", "env", "expected"),
    [
        pytest.param(None, {}, "https://api.tracebloc.io/", id="no-client-env-is-production"),
        pytest.param("prod", {}, "https://api.tracebloc.io/", id="prod"),
        pytest.param("dev", {}, "https://dev-api.tracebloc.io/", id="dev"),
        pytest.param("stg", {}, "https://stg-api.tracebloc.io/", id="stg"),
        pytest.param("staging", {}, "https://stg-api.tracebloc.io/", id="unparsed-staging-alias"),
        pytest.param(
            "dev",
            {"TRACEBLOC_BACKEND_URL": "https://b.example/"},
            "https://b.example/",
            id="override-wins-over-client-env",
        ),
        pytest.param(
            None,
            {"TRACEBLOC_BACKEND_URL": "https://b.example:8443/api"},
            "https://b.example:8443/api/",
            id="override-gets-trailing-slash",
        ),
        pytest.param(
            None,
            {"TRACEBLOC_BACKEND_URL": "  "},
            "https://api.tracebloc.io/",
            id="blank-override-ignored",
        ),
        pytest.param(
            None,
            {"TRACEBLOC_BACKEND_URL": "http://127.0.0.1:8080"},
            "http://127.0.0.1:8080/",
            id="http-to-loopback-ipv4",
        ),
        pytest.param(
            None,
            {"TRACEBLOC_BACKEND_URL": "http://127.1.2.3/"},
            "http://127.1.2.3/",
            id="http-to-anywhere-in-127-8",
        ),
        pytest.param(
            None,
            {"TRACEBLOC_BACKEND_URL": "http://localhost:5000/"},
            "http://localhost:5000/",
            id="http-to-localhost",
        ),
        pytest.param(
            None,
            {"TRACEBLOC_BACKEND_URL": "http://[::1]:5000/"},
            "http://[::1]:5000/",
            id="http-to-loopback-ipv6",
        ),
    ],
)
def test_backend_url(client_env: str | None, env: dict[str, str], expected: str) -> None:
    assert backend_url(client_env, env) == expected


@pytest.mark.parametrize(
    "override",
    [
        pytest.param("http://example.com/", id="plain-http-to-a-remote-host"),
        pytest.param("http://127.0.0.1.example.com/", id="loopback-lookalike-name"),
        pytest.param("http://10.0.0.1/", id="plain-http-to-a-private-address"),
        pytest.param("ftp://127.0.0.1/", id="other-scheme"),
        pytest.param("api.tracebloc.io", id="no-scheme"),
        pytest.param("https://", id="no-host"),
        pytest.param("https://b.example:port/", id="port-not-a-number"),
        pytest.param("https://b.example/?x=1", id="query"),
        pytest.param("https://user:pw@b.example/", id="credentials-in-url"),
    ],
)
def test_backend_url_refuses_a_bad_override(override: str) -> None:
    with pytest.raises(BadInput) as caught:
        backend_url(None, {"TRACEBLOC_BACKEND_URL": override})
    assert "TRACEBLOC_BACKEND_URL" in caught.value.message
    assert "\n" not in caught.value.message
    assert "pw" not in caught.value.message


# --- verdicts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        pytest.param(Reply(200), Verdict.VALID, id="200-valid"),
        pytest.param(
            Reply(400, b'{"non_field_errors": ["Unable to log in"]}'),
            Verdict.REJECTED,
            id="400-rejected",
        ),
        pytest.param(Reply(401), Verdict.INACTIVE, id="401-inactive"),
        pytest.param(Reply(500), Verdict.UNVERIFIED, id="500-server-error"),
        pytest.param(Reply(503), Verdict.UNVERIFIED, id="503-unavailable"),
        pytest.param(Reply(403), Verdict.UNVERIFIED, id="403-forbidden-by-a-proxy"),
        pytest.param(Reply(200, b"<html>not json</html>"), Verdict.VALID, id="200-any-body"),
        pytest.param(GARBAGE, Verdict.UNVERIFIED, id="not-http-at-all"),
        pytest.param(HANG_UP, Verdict.UNVERIFIED, id="connection-closed-without-answer"),
    ],
)
def test_verdict_by_answer(backend: BackendServer, reply: Reply, verdict: Verdict) -> None:
    backend.then(reply)
    check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=5)
    assert check.verdict is verdict
    assert len(backend.requests) == 1
    if verdict is Verdict.UNVERIFIED:
        assert check.detail and "\n" not in check.detail
        assert PASSWORD not in check.detail
    else:
        assert check == Check(verdict)


def test_an_unexpected_status_is_named(backend: BackendServer) -> None:
    backend.then(503)
    check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=5)
    assert check.detail.startswith("HTTP 503")
    assert f"{backend.url}api-token-auth/" in check.detail


def test_a_redirect_is_not_followed(backend: BackendServer) -> None:
    with BackendServer() as elsewhere:
        backend.then(Reply(302, headers=(("Location", f"{elsewhere.url}steal/"),)))
        check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=5)
        assert elsewhere.requests == []
    assert check.verdict is Verdict.UNVERIFIED
    assert "HTTP 302" in check.detail and "not followed" in check.detail


def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{dead_port()}/"
    check = verify(url, "client-1", PASSWORD, env={}, timeout=5)
    assert check == Check(Verdict.UNVERIFIED, f"could not reach {url}: connection refused")


def test_a_slow_backend_is_given_up_on_after_the_timeout(backend: BackendServer) -> None:
    backend.then(Reply(200, delay=5))
    started = time.monotonic()
    check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=0.3)
    assert time.monotonic() - started < 4  # generous: the server would answer after 5 s
    assert check.verdict is Verdict.UNVERIFIED
    assert "within 0.3s" in check.detail


def test_a_trickling_answer_is_bounded_as_a_whole(backend: BackendServer) -> None:
    # Every byte comes quickly, the status line only after seconds: a per-read timeout alone
    # would wait for all of it.
    backend.then(Reply(200, trickle=0.1))
    started = time.monotonic()
    check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=0.5)
    assert time.monotonic() - started < 4  # generous; the whole answer takes over 6 s
    assert check == Check(Verdict.UNVERIFIED, f"no answer from {backend.url} within 0.5s")


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        pytest.param(GARBAGE, "the answer was not HTTP", id="not-http"),
        pytest.param(HANG_UP, "the connection was closed without an answer", id="hang-up"),
    ],
)
def test_a_broken_answer_is_worded_plainly(
    backend: BackendServer, reply: Reply, words: str
) -> None:
    backend.then(reply)
    check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=5)
    assert check == Check(Verdict.UNVERIFIED, f"could not reach {backend.url}: {words}")


def test_a_server_header_cannot_break_the_line(backend: BackendServer) -> None:
    backend.then(Reply(301, headers=(("Location", "http://x/\x1b[31mred\tand\x07bell"),)))
    check = verify(backend.url, "client-1", PASSWORD, env={}, timeout=5)
    assert check.verdict is Verdict.UNVERIFIED
    assert check.detail.isprintable()


# --- what the backend receives -------------------------------------------------------------


@pytest.mark.parametrize(
    ("suffix", "path"),
    [
        pytest.param("", "/api-token-auth/", id="base-with-slash"),
        pytest.param("no-slash", "/api-token-auth/", id="base-without-slash"),
        pytest.param("prefix/", "/prefix/api-token-auth/", id="path-prefix-with-slash"),
        pytest.param("prefix", "/prefix/api-token-auth/", id="path-prefix-without-slash"),
    ],
)
def test_url_join(backend: BackendServer, suffix: str, path: str) -> None:
    base = backend.url.rstrip("/") if suffix == "no-slash" else backend.url + suffix
    assert verify(base, "client-1", "pw", env={}, timeout=5).verdict is Verdict.VALID
    assert backend.requests[0].path == path


def test_form_fields_received_exactly(backend: BackendServer) -> None:
    verify(backend.url, "client 1&x=y", PASSWORD, env={}, timeout=5)
    (request,) = backend.requests
    assert request.method == "POST"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.headers["User-Agent"].startswith("tracebloc-installer/")
    assert request.pairs == (("username", "client 1&x=y"), ("password", PASSWORD))
    assert PASSWORD not in repr(request)


@pytest.fixture(scope="module")
def shared_backend() -> Iterator[BackendServer]:
    with BackendServer() as server:
        yield server


@settings(max_examples=60, deadline=None)
@given(
    username=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30),
    password=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=60),
)
def test_any_text_round_trips(shared_backend: BackendServer, username: str, password: str) -> None:
    before = len(shared_backend.requests)
    check = verify(shared_backend.url, username, password, env={}, timeout=5)
    assert check.verdict is Verdict.VALID
    got = shared_backend.requests[before]
    assert got.fields["username"] == username
    assert got.fields["password"] == password
    assert [name for name, _ in got.pairs] == ["username", "password"]


def test_debug_log_names_url_and_verdict_never_the_password(
    backend: BackendServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    backend.then(400)
    env = {
        "HTTPS_PROXY": f"http://proxyuser:{PASSWORD}@127.0.0.1:{dead_port()}",
        "NO_PROXY": "127.0.0.1",
    }
    verify(backend.url, "client-1", PASSWORD, env=env, timeout=5)
    assert f"{backend.url}api-token-auth/" in caplog.text
    assert "rejected" in caplog.text
    assert PASSWORD not in caplog.text
    assert "proxyuser" not in caplog.text


def test_importing_the_module_does_not_import_requests() -> None:
    code = "import sys, installer.edges.backend; print('requests' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


# --- proxies -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "bypass"),
    [
        pytest.param("api.tracebloc.io", 443, "", False, id="empty"),
        pytest.param("api.tracebloc.io", 443, "*", True, id="star"),
        pytest.param("api.tracebloc.io", 443, "api.tracebloc.io", True, id="exact-host"),
        pytest.param("api.tracebloc.io", 443, "tracebloc.io", True, id="parent-domain"),
        pytest.param("api.tracebloc.io", 443, ".tracebloc.io", True, id="leading-dot"),
        pytest.param("api.tracebloc.io", 443, "*.tracebloc.io", True, id="leading-star-dot"),
        pytest.param("tracebloc.io", 443, ".tracebloc.io", False, id="leading-dot-subdomains-only"),
        pytest.param(
            "tracebloc.io", 443, "*.tracebloc.io", False, id="leading-star-subdomains-only"
        ),
        pytest.param("api.tracebloc.io", 443, "bloc.io", False, id="not-a-label-boundary"),
        pytest.param("api.tracebloc.io", 443, "io.tracebloc", False, id="other-domain"),
        pytest.param("API.Tracebloc.IO", 443, " TRACEBLOC.io ", True, id="case-and-spaces"),
        pytest.param("api.tracebloc.io.", 443, "tracebloc.io", False, id="trailing-dot-host-as-go"),
        pytest.param(
            "api.tracebloc.io", 443, "a.com b.com,tracebloc.io", True, id="comma-separated"
        ),
        pytest.param(
            "api.tracebloc.io", 443, "a.com tracebloc.io", False, id="spaces-do-not-separate"
        ),
        pytest.param("api.tracebloc.io", 443, "api.tracebloc.io:443", True, id="host-port-same"),
        pytest.param(
            "api.tracebloc.io", 443, "api.tracebloc.io:8443", False, id="host-port-different"
        ),
        pytest.param("10.0.0.1", 8080, "10.0.0.1", True, id="ipv4-exact"),
        pytest.param("10.0.0.1", 8080, "10.0.0.1:8080", True, id="ipv4-port-same"),
        pytest.param("10.0.0.1", 8080, "10.0.0.1:9090", False, id="ipv4-port-different"),
        pytest.param("10.0.0.1", 8080, "10.0.0.2", False, id="ipv4-other"),
        pytest.param("127.0.0.1", 8080, "", True, id="loopback-never-proxied"),
        pytest.param("localhost", 8080, "", True, id="localhost-never-proxied"),
        pytest.param("10.1.2.3", 443, "10.0.0.0/8", True, id="cidr-in"),
        pytest.param("11.1.2.3", 443, "10.0.0.0/8", False, id="cidr-out"),
        pytest.param("10.0.0.1", 443, "0.0.1", True, id="a-domain-entry-is-compared-as-text-as-go"),
        pytest.param("10.0.0.1", 443, "intranet", False, id="names-are-not-resolved"),
        pytest.param("fd00::1", 443, "fd00::1", True, id="ipv6-bare"),
        pytest.param("fd00::1", 443, "[fd00::1]", False, id="ipv6-bracketed-without-port-as-go"),
        pytest.param("[fd00::1]", 8080, "[fd00::1]:8080", True, id="ipv6-port-same"),
        pytest.param("fd00::1", 8080, "[fd00::1]:9090", False, id="ipv6-port-different"),
        pytest.param("fd00::5", 443, "fd00::/8", True, id="ipv6-cidr"),
        pytest.param("10.1.2.3", 443, "fd00::/8", False, id="ipv4-host-ipv6-range"),
    ],
)
def test_no_proxy_matching(host: str, port: int, no_proxy: str, bypass: bool) -> None:
    assert bypass_proxy(host, port, no_proxy) is bypass


@pytest.mark.parametrize(
    ("url", "env", "expected"),
    [
        pytest.param("https://api.tracebloc.io/", {}, None, id="none-set"),
        pytest.param(
            "https://api.tracebloc.io/",
            {"HTTPS_PROXY": "http://p:3128"},
            "http://p:3128",
            id="https-proxy",
        ),
        pytest.param(
            "https://api.tracebloc.io/",
            {"https_proxy": "p:3128"},
            "http://p:3128",
            id="lowercase-without-scheme",
        ),
        pytest.param(
            "https://api.tracebloc.io/",
            {"HTTP_PROXY": "http://q:80"},
            "http://q:80",
            id="http-proxy-is-the-fallback",
        ),
        pytest.param(
            "https://api.tracebloc.io/",
            {"HTTP_PROXY": "http://q:80", "HTTPS_PROXY": "http://p:3128"},
            "http://p:3128",
            id="own-scheme-first",
        ),
        pytest.param(
            "https://api.tracebloc.io/",
            {"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "tracebloc.io"},
            None,
            id="no-proxy-bypasses",
        ),
        pytest.param(
            "https://api.tracebloc.io/",
            {"HTTPS_PROXY": "http://p:3128", "no_proxy": ".tracebloc.io"},
            None,
            id="lowercase-no-proxy-bypasses",
        ),
        pytest.param(
            "https://api.tracebloc.io/",
            {"HTTPS_PROXY": "http://u:p@ss:w/rd@p:3128/x"},
            "http://u:p%40ss%3Aw%2Frd@p:3128",
            id="credentials-kept-literally",
        ),
    ],
)
def test_proxy_for(url: str, env: dict[str, str], expected: str | None) -> None:
    assert proxy_for(url, proxy_environment(env)) == expected


def test_a_dead_proxy_makes_the_check_unverified(backend: BackendServer) -> None:
    port = dead_port()
    check = verify(
        backend.url,
        "client-1",
        PASSWORD,
        env={"HTTPS_PROXY": f"http://127.0.0.1:{port}", "TB_TEST_PROXY_LOOPBACK": "1"},
        timeout=5,
    )
    assert check == Check(
        Verdict.UNVERIFIED, f"could not use the proxy 127.0.0.1:{port}: connection refused"
    )
    assert backend.requests == []


def test_no_proxy_bypasses_the_dead_proxy(backend: BackendServer) -> None:
    env = {
        "HTTPS_PROXY": f"http://127.0.0.1:{dead_port()}",
        "NO_PROXY": "localhost,127.0.0.1",
        "TB_TEST_PROXY_LOOPBACK": "1",
    }
    assert verify(backend.url, "client-1", PASSWORD, env=env, timeout=5).verdict is Verdict.VALID
    assert len(backend.requests) == 1


def test_proxies_come_from_the_env_mapping_not_the_process(
    backend: BackendServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{dead_port()}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert verify(backend.url, "client-1", PASSWORD, env={}, timeout=5).verdict is Verdict.VALID


def test_the_request_goes_through_the_proxy_with_its_credentials() -> None:
    proxy_password = "p@ss:w/rd%41"
    with BackendServer() as proxy:
        env = {"HTTPS_PROXY": f"http://proxyuser:{proxy_password}@127.0.0.1:{proxy.port}"}
        # The backend's name never resolves: only the proxy can have answered.
        check = verify("http://backend.invalid/", "client-1", PASSWORD, env=env, timeout=5)
        assert check.verdict is Verdict.VALID
        (request,) = proxy.requests
    assert request.path == "http://backend.invalid/api-token-auth/"
    expected = base64.b64encode(f"proxyuser:{proxy_password}".encode()).decode()
    assert request.headers["Proxy-Authorization"] == f"Basic {expected}"
    assert request.fields["password"] == PASSWORD


def test_a_failing_proxy_hides_its_credentials() -> None:
    env = {"HTTPS_PROXY": f"http://proxyuser:hunter2-proxy@127.0.0.1:{dead_port()}"}
    check = verify("https://backend.invalid/", "client-1", PASSWORD, env=env, timeout=5)
    assert check.verdict is Verdict.UNVERIFIED
    assert "proxy" in check.detail
    assert "hunter2-proxy" not in check.detail and "proxyuser" not in check.detail


# --- CA bundle -----------------------------------------------------------------------------


def test_no_ca_bundle() -> None:
    assert ca_bundle({}) is None
    assert ca_bundle({"TRACEBLOC_CA_BUNDLE": " "}) is None


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(None, id="missing-file"),
        pytest.param("directory", id="a-directory"),
        pytest.param(b"", id="empty-file"),
        pytest.param(b"not a certificate\n", id="text-file"),
        pytest.param(
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", id="broken-pem"
        ),
        pytest.param(bytes(range(256)), id="binary-garbage"),
    ],
)
def test_a_bad_ca_bundle_is_refused(tmp_path: Path, content: bytes | str | None) -> None:
    path = tmp_path / "ca.pem"
    if content == "directory":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    env = {"TRACEBLOC_CA_BUNDLE": str(path)}
    with pytest.raises(BadInput) as caught:
        ca_bundle(env)
    assert "TRACEBLOC_CA_BUNDLE" in caught.value.message
    with pytest.raises(BadInput):
        verify("http://127.0.0.1:9/", "client-1", PASSWORD, env=env, timeout=5)


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0,
    reason="root (and Windows) can read a mode-000 file",
)
def test_an_unreadable_ca_bundle_is_refused(tls: TlsFiles, tmp_path: Path) -> None:
    path = tmp_path / "ca.pem"
    shutil.copy(tls.ca, path)
    path.chmod(0)
    with pytest.raises(BadInput, match="TRACEBLOC_CA_BUNDLE.*cannot be read"):
        ca_bundle({"TRACEBLOC_CA_BUNDLE": str(path)})


# --- TLS -----------------------------------------------------------------------------------


class TlsFiles:
    def __init__(self, root: Path) -> None:
        self.ca = root / "ca.pem"
        self.cert = root / "server.pem"
        self.key = root / "server.key"
        self.localhost_cert = root / "localhost.pem"

    def server_context(self, cert: Path | None = None) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert or self.cert, self.key)
        return context


def _openssl(*args: str | Path, cwd: Path) -> None:
    subprocess.run(
        ["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True, timeout=60
    )


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    """A throwaway CA and a server certificate it signed (for 127.0.0.1 and localhost), plus
    one for `localhost` alone; made with the openssl command, offline."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    root = tmp_path_factory.mktemp("tls")
    files = TlsFiles(root)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        files.ca,
        "-days",
        "2",
        "-subj",
        "/CN=tracebloc test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=root,
    )
    _openssl(
        "req",
        "-new",
        *ec,
        "-keyout",
        files.key,
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
        cwd=root,
    )
    for name, san in (
        (files.cert, "IP:127.0.0.1,DNS:localhost"),
        (files.localhost_cert, "DNS:localhost"),
    ):
        ext = root / f"{name.stem}.ext"
        ext.write_text(
            f"subjectAltName={san}\nbasicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
            "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            files.ca,
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            name,
            "-days",
            "2",
            "-extfile",
            ext,
            cwd=root,
        )
    return files


def test_tls_to_an_unknown_ca_is_unverified_and_sends_nothing(tls: TlsFiles) -> None:
    with BackendServer(tls=tls.server_context()) as server:
        url = server.url
        check = verify(url, "client-1", PASSWORD, env={}, timeout=5)
        assert server.requests == []
    assert check.verdict is Verdict.UNVERIFIED
    assert check.detail.startswith(f"the TLS certificate of {url} is not trusted: ")
    assert "TRACEBLOC_CA_BUNDLE" in check.detail


def test_tls_to_a_plain_http_server_is_unverified(backend: BackendServer) -> None:
    url = backend.url.replace("http://", "https://")
    check = verify(url, "client-1", PASSWORD, env={}, timeout=5)
    assert check.verdict is Verdict.UNVERIFIED
    assert check.detail.startswith(f"could not reach {url}: TLS failed")


def test_tls_with_the_ca_bundle_is_valid(tls: TlsFiles) -> None:
    with BackendServer(tls=tls.server_context()) as server:
        env = {"TRACEBLOC_CA_BUNDLE": str(tls.ca)}
        assert verify(server.url, "client-1", PASSWORD, env=env, timeout=5).verdict is Verdict.VALID
        assert server.requests[0].fields == {"username": "client-1", "password": PASSWORD}


def test_tls_checks_the_host_name(tls: TlsFiles) -> None:
    with BackendServer(tls=tls.server_context(tls.localhost_cert)) as server:
        env = {"TRACEBLOC_CA_BUNDLE": str(tls.ca)}
        check = verify(server.url, "client-1", PASSWORD, env=env, timeout=5)  # 127.0.0.1
        assert server.requests == []
    assert check.verdict is Verdict.UNVERIFIED
    assert "127.0.0.1" in check.detail


def test_a_tls_proxy_is_trusted_through_the_ca_bundle(tls: TlsFiles) -> None:
    with BackendServer(tls=tls.server_context()) as proxy:
        env = {"HTTPS_PROXY": f"https://127.0.0.1:{proxy.port}"}
        untrusted = verify("http://backend.invalid/", "client-1", PASSWORD, env=env, timeout=5)
        assert proxy.requests == []
        env["TRACEBLOC_CA_BUNDLE"] = str(tls.ca)
        trusted = verify("http://backend.invalid/", "client-1", PASSWORD, env=env, timeout=5)
        assert [r.path for r in proxy.requests] == ["http://backend.invalid/api-token-auth/"]
    assert untrusted.verdict is Verdict.UNVERIFIED
    assert trusted.verdict is Verdict.VALID


def test_the_ca_bundle_is_returned_as_an_absolute_path(
    tls: TlsFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tls.ca.parent)
    assert ca_bundle({"TRACEBLOC_CA_BUNDLE": tls.ca.name}) == str(tls.ca)


def test_the_os_trust_store_is_used() -> None:
    import truststore

    context = ssl_context(None)
    assert isinstance(context, truststore.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_without_truststore_certifi_and_the_ca_bundle_still_verify(
    tls: TlsFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "truststore", None)  # `import truststore` now fails
    context = ssl_context(str(tls.ca))
    assert not type(context).__module__.startswith("truststore")
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 1  # certifi's roots and ours
    with BackendServer(tls=tls.server_context()) as server:
        assert verify(server.url, "c", "pw", env={}, timeout=5).verdict is Verdict.UNVERIFIED
        env = {"TRACEBLOC_CA_BUNDLE": str(tls.ca)}
        assert verify(server.url, "c", "pw", env=env, timeout=5).verdict is Verdict.VALID


# requests without charset_normalizer or chardet (as the frozen binary bundles it) warns as
# it is imported; backend.http is the one import and ignores that warning while it imports,
# and the filter does not outlive the import.
_NO_DETECTOR = (
    "import sys; sys.modules['charset_normalizer'] = None; sys.modules['chardet'] = None; "
)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", _NO_DETECTOR + code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )


def test_requests_imported_through_http_says_nothing_without_an_encoding_detector() -> None:
    direct = _python("import requests")
    assert "Unable to find acceptable character detection dependency" in direct.stderr  # it would
    through = _python(
        "from installer.edges import backend; r = backend.http(); "
        "print(r.Session.__name__, r.adapters.HTTPAdapter.__name__)"
    )
    assert (through.returncode, through.stdout, through.stderr) == (0, "Session HTTPAdapter\n", "")
    later = _python(
        "from installer.edges import backend; import warnings; backend.http(); "
        "warnings.warn('Unable to find acceptable character detection dependency')"
    )
    assert later.returncode != 0 and "UserWarning" in later.stderr  # the filter did not outlive it


def test_a_loopback_backend_is_never_sent_through_the_proxy_as_go_never_sends_it(
    backend: BackendServer,
) -> None:
    check = verify(
        backend.url,
        "client-1",
        PASSWORD,
        env={"HTTPS_PROXY": f"http://127.0.0.1:{dead_port()}"},
        timeout=5,
    )
    assert check.verdict is not Verdict.UNVERIFIED and backend.requests
