"""The network preflight: before credentials and any change, can this machine reach every
host the install needs, the way the install will? Hosts from decide/endpoints.endpoints (or
PF_CRITICALS in tests), probes from edges/netprobe; `install` stops on the verdict (exit 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from installer.commands.tools import REQUIRED
from installer.decide import endpoints, network
from installer.decide.errors import InstallerError
from installer.decide.settings import DEFAULT_REPO_URL, PlanConfig
from installer.decide.tooling import ToolChoice
from installer.edges import netprobe, trust
from installer.present import netreport
from installer.present.ui import Ui


def tool_urls(choices: Mapping[str, ToolChoice] | None) -> list[str]:
    """The URLs of the tools install cannot do without (kubectl, helm) that will be
    downloaded; a tool found anywhere is not. k3d (the local-cluster path's) comes from
    commands/network_hosts.py."""
    return [
        c.url
        for name, c in (choices or {}).items()
        if name in REQUIRED and c.source == "download" and c.url
    ]


def check(
    cfg: PlanConfig,
    env: Mapping[str, str],
    *,
    tools: Iterable[str] = (),
    runtime: Iterable[str] = (),
    nvidia: bool = False,
) -> network.Report:
    """Probe every needed host (all at once, bounded) and judge the answers. `tools`: download
    URLs; `runtime`: the runtime install's hosts; `nvidia`: the device plugin image is pulled."""
    if cfg.preflight_skipped:
        return network.skipped_report()
    # The CA bundle and the backend, validated by commands/settings.build.
    ca_path, ca_name, backend_url = cfg.ca_bundle, cfg.ca_variable, cfg.backend_url
    assert backend_url is not None  # built for plan and install
    raw = env.get("PF_CRITICALS", "")
    if raw.strip():
        needed = endpoints.parse_criticals(raw, trust.is_loopback)
        source = endpoints.CRITICALS
    else:
        needed = endpoints.endpoints(
            backend_url,
            chart_repo=DEFAULT_REPO_URL if cfg.chart_is_default else None,
            mirror=cfg.registry.mirror,
            tool_urls=tools,
            runtime=runtime,
            nvidia=nvidia,
        )
        source = "plan"
    trusted = netprobe.trust(ca_path, ca_name)
    probes = netprobe.probe_all(needed, env, trusted)
    inspection, issuer = network.inspection(probes)
    used = next((p.via_proxy for p in probes if p.via_proxy), "")
    configured = f"{cfg.proxy.host}:{cfg.proxy.port}" if cfg.proxy else ""
    shown = used or (
        f"{configured} (not used for these hosts: NO_PROXY)"
        if configured and probes
        else configured
    )
    profile = network.Profile(shown, ca_name if ca_path else "", ca_path or "", inspection, issuer)
    return network.report_for(profile, probes, mirror=cfg.registry.mirror, source=source)


class NetworkStop(InstallerError):
    """A needed host cannot be reached: exit 1, the report carried as data (`--json`)."""

    def __init__(self, report: network.Report) -> None:
        super().__init__(
            netreport.stop_line(report).removeprefix("stop: "),
            "\n".join(report.hints) or "see the network report above",
        )
        self.data = {"network": netreport.as_json(report)}


def gate(
    cfg: PlanConfig,
    env: Mapping[str, str],
    ui: Ui,
    *,
    tools: Iterable[str] = (),
    runtime: Iterable[str] = (),
    nvidia: bool = False,
) -> network.Report:
    """`check`, shown; a stop raises (exit 1) before anything is asked or changed. Skipped
    (TRACEBLOC_SKIP_PREFLIGHT): nothing is shown here, the machine preflight's one line
    says so for both."""
    report = check(cfg, env, tools=tools, runtime=runtime, nvidia=nvidia)
    if report.skipped:
        return report
    lines = netreport.text_lines(report)
    ui.info("\n".join(lines))
    if report.stop:
        raise NetworkStop(report)
    return report
