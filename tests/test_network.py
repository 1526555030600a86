"""The network preflight's pure decisions (decide/network.py, decide/endpoints.py) and the
certificate reader."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import trustme

from installer.decide import endpoints, network, settings
from installer.decide.endpoints import Endpoint, Kind
from installer.decide.errors import BadInput
from installer.decide.network import Probe, Profile, Status
from installer.edges import netprobe, trust

BACKEND = "https://api.tracebloc.io/"
REPO_URL = "https://tracebloc.github.io/client"


def hosts(endpoints: list[Endpoint]) -> list[str]:
    return [e.hostport for e in endpoints]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param(
            {},
            [
                "api.tracebloc.io:443",
                "tracebloc.github.io:443",
                "registry-1.docker.io:443",
                "auth.docker.io:443",
                "ghcr.io:443",
            ],
            id="default-everything-found",
        ),
        pytest.param(
            {"mirror": "mirror.example:5000/tb"},
            ["api.tracebloc.io:443", "tracebloc.github.io:443", "mirror.example:5000"],
            id="mirror-replaces-the-registries",
        ),
        pytest.param(
            {"chart_repo": None},
            [
                "api.tracebloc.io:443",
                "registry-1.docker.io:443",
                "auth.docker.io:443",
                "ghcr.io:443",
            ],
            id="local-chart",
        ),
        pytest.param(
            {
                "tool_urls": [
                    "https://dl.k8s.io/release/v1/bin/kubectl",
                    "https://get.helm.sh/helm.tgz",
                    "https://dl.k8s.io/other",
                ]
            },
            [
                "api.tracebloc.io:443",
                "tracebloc.github.io:443",
                "registry-1.docker.io:443",
                "auth.docker.io:443",
                "ghcr.io:443",
                "dl.k8s.io:443",
                "get.helm.sh:443",
            ],
            id="tools-to-download-once-each",
        ),
        pytest.param(
            {
                "runtime": [
                    "https://download.docker.com/linux/debian/gpg",
                    "https://download.docker.com/",
                ],
                "mirror": "m.example",
            },
            [
                "api.tracebloc.io:443",
                "tracebloc.github.io:443",
                "m.example:443",
                "download.docker.com:443",
            ],
            id="runtime-installed-once-each",
        ),
        pytest.param(
            {"runtime": ["https://formulae.brew.sh/", "https://ghcr.io/v2/"]},
            [
                "api.tracebloc.io:443",
                "tracebloc.github.io:443",
                "registry-1.docker.io:443",
                "auth.docker.io:443",
                "ghcr.io:443",
                "formulae.brew.sh:443",
            ],
            id="runtime-host-already-probed-as-a-registry",
        ),
        pytest.param(
            {"nvidia": True},
            [
                "api.tracebloc.io:443",
                "tracebloc.github.io:443",
                "registry-1.docker.io:443",
                "auth.docker.io:443",
                "ghcr.io:443",
                "nvcr.io:443",
            ],
            id="nvidia-device-plugin",
        ),
        pytest.param(
            {"nvidia": True, "mirror": "m.example"},
            ["api.tracebloc.io:443", "tracebloc.github.io:443", "m.example:443"],
            id="nvidia-device-plugin-from-the-mirror",
        ),
    ],
)
def test_endpoints_come_from_the_configuration(
    kwargs: dict[str, object], expected: list[str]
) -> None:
    args: dict[str, object] = {"chart_repo": REPO_URL, "mirror": None, **kwargs}
    found = endpoints.endpoints(BACKEND, **args)  # type: ignore[arg-type]
    assert hosts(found) == expected
    chart = [e for e in found if e.kind is Kind.CHART]
    assert all(e.strict and e.url.endswith("/client/index.yaml") for e in chart)


def test_criticals_in_the_scripts_format() -> None:
    text = "# a comment\n\nAPI|https://127.0.0.1:8443/\nDocker Hub registry|https://[::1]:9/v2/|strict\n"
    found = endpoints.parse_criticals(text, trust.is_loopback)
    assert [(e.label, e.hostport, e.strict, e.kind) for e in found] == [
        ("API", "127.0.0.1:8443", False, Kind.OTHER),
        ("Docker Hub registry", "[::1]:9", True, Kind.REGISTRY),
    ]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("hub|https://registry-1.docker.io/v2/", id="public-host"),
        pytest.param("hub|http://127.0.0.1:80/", id="plain-http"),
        pytest.param("hub|https://127.0.0.1/|lenient", id="unknown-third-field"),
        pytest.param("just a label", id="no-url"),
    ],
)
def test_criticals_that_are_not_loopback_https_are_bad_input(text: str) -> None:
    with pytest.raises(BadInput, match="PF_CRITICALS"):
        endpoints.parse_criticals(text, trust.is_loopback)


def probe(
    status: Status,
    *,
    well_known: bool = False,
    via: str = "",
    issuer: str = "",
    trusted_by: str = "",
) -> Probe:
    return Probe(
        Endpoint("x", "https://h.example/", well_known=well_known),
        status,
        issuer=issuer,
        trusted_by=trusted_by,
        via_proxy=via,
    )


@pytest.mark.parametrize(
    ("probes", "expected"),
    [
        pytest.param(
            [probe(Status.TLS, via="p:3128", issuer="Corp CA")],
            ("yes", "Corp CA"),
            id="failed-through-proxy",
        ),
        pytest.param(
            [probe(Status.OK, via="p:3128", issuer="Corp CA", trusted_by="TRACEBLOC_CA_BUNDLE")],
            ("yes", "Corp CA"),
            id="verified-only-by-the-bundle",
        ),
        pytest.param(
            [probe(Status.OK, well_known=True, issuer="Corp CA", trusted_by="system")],
            ("yes", "Corp CA"),
            id="well-known-host-with-a-private-issuer",
        ),
        pytest.param(
            [probe(Status.OK, well_known=True, issuer="Let's Encrypt", trusted_by="system")],
            ("no", "Let's Encrypt"),
            id="public-issuer",
        ),
        pytest.param(
            [probe(Status.TLS, issuer="Self Signed")],
            ("unknown", ""),
            id="direct-loopback-failure-is-not-inspection",
        ),
        pytest.param([probe(Status.TIMEOUT, via="p:3128")], ("unknown", ""), id="nothing-seen"),
    ],
)
def test_tls_inspection_verdict(probes: list[Probe], expected: tuple[str, str]) -> None:
    assert network.inspection(probes) == expected


def test_a_failed_registry_is_a_stop_with_the_mirror_hint() -> None:
    registry = Endpoint("Docker Hub", "https://registry-1.docker.io/v2/", kind=Kind.REGISTRY)
    api = Endpoint("API", BACKEND)
    report = network.report_for(
        Profile("", "", "", "unknown", ""),
        [Probe(api, Status.OK), Probe(registry, Status.REFUSED)],
        mirror=None,
    )
    assert report.stop
    assert report.failures == ("registry-1.docker.io:443: connection refused",)
    assert any("TRACEBLOC_IMAGE_REGISTRY" in h for h in report.hints)
    assert any("HTTPS_PROXY" in h for h in report.hints)


def test_all_ok_or_unchecked_is_no_stop() -> None:
    api = Endpoint("API", BACKEND)
    report = network.report_for(
        Profile("p:1", "", "", "unknown", ""),
        [Probe(api, Status.OK), Probe(api, Status.UNCHECKED)],
        mirror=None,
    )
    assert not report.stop and report.hints == ()


def test_the_ca_rule_prefers_traceblocs_variable() -> None:
    assert settings.ca_variable({"CURL_CA_BUNDLE": "/b", "TRACEBLOC_CA_BUNDLE": "/a"}) == (
        "TRACEBLOC_CA_BUNDLE",
        "/a",
    )
    assert settings.ca_variable({"CURL_CA_BUNDLE": " /b ", "TRACEBLOC_CA_BUNDLE": " "}) == (
        "CURL_CA_BUNDLE",
        "/b",
    )
    assert settings.ca_variable({}) is None


def test_a_bad_curl_ca_bundle_is_named(tmp_path: Path) -> None:
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate", encoding="ascii")
    with pytest.raises(BadInput, match="CURL_CA_BUNDLE=.*holds no PEM certificate"):
        trust.ca_bundle({"CURL_CA_BUNDLE": str(bogus)})


def test_the_issuer_is_read_from_a_der_certificate() -> None:
    ca = trustme.CA(organization_name="Hospital Inspect CA")
    leaf = ca.issue_cert("127.0.0.1")
    der = ssl.PEM_cert_to_DER_cert(leaf.cert_chain_pems[0].bytes().decode("ascii"))
    assert netprobe.der_issuer(der) == "Hospital Inspect CA"
    assert netprobe.der_issuer(b"\x30\x82garbage") == ""
    assert netprobe.der_issuer(b"") == ""


def test_only_the_tools_to_be_downloaded_bring_their_hosts() -> None:
    from installer.commands.network import tool_urls
    from installer.decide.tooling import ToolChoice

    choices = {
        "kubectl": ToolChoice("kubectl", "/bin/kubectl", "v1.30.0", "path"),
        "helm": ToolChoice("helm", "/t/helm", None, "download", url="https://get.helm.sh/h.tgz"),
        "k3d": ToolChoice("k3d", "/t/k3d", None, "download", url="https://github.com/k3d"),
    }
    assert tool_urls(choices) == ["https://get.helm.sh/h.tgz"]
    assert tool_urls(None) == []
