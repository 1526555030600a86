"""The local cluster's Windows host, as the survey lists it: WSL2 and Docker Desktop to set
up when Docker does not answer (commands/winhost.py), or, when it does, another daily user's
docker-users membership; reads only."""

from __future__ import annotations

from collections.abc import Mapping

from installer.decide import localcluster as lc
from installer.decide.drift import DockerRead, docker_remedy
from installer.decide.localcluster_state import Local
from installer.decide.model import MachineFacts
from installer.decide.redact import Redactor
from installer.decide.winhost import HostPlan


def windows_host(
    s: lc.Settings,
    decision: lc.Decision,
    machine: MachineFacts,
    info: DockerRead,
    env: Mapping[str, str],
    redactor: Redactor | None,
    min_mem_gib: float,
    host: HostPlan | None = None,
) -> Local:
    """Windows without a Docker that answers: the host preparation (commands/winhost.py) as the
    plan's first steps, or its blocker. `host`: the plan the network preflight read, if any."""
    from installer.commands import winhost

    if host is None:
        opts = winhost.options(env, min_mem_gib)
        # Docker does not answer, so no k3d cluster of ours can hold the API port.
        _, host = winhost.survey(
            env, opts, redactor or Redactor(), our_cluster_running=False, docker_usable=False
        )
    said = info.reason or "Docker is not running"
    if host.blockers:
        message, remedy = host.blockers[0]
        if host.unread:  # what the installer would have done for it is unknown: do it by hand
            remedy = (
                f"{docker_remedy('windows', info.state)} (the installer could not read "
                "this machine to prepare it; if that persists, run it with --verbose "
                "and send the log)"
            )
        return Local(
            s,
            decision,
            machine,
            docker=info,
            problems=((f"{said}; {message}", remedy),),
            windows=host,
        )
    if not host.steps:
        return Local(
            s,
            decision,
            machine,
            docker=info,
            problems=((said, docker_remedy("windows", info.state)),),
        )
    return Local(s, decision, machine, docker=info, windows=host)


def daily_user(
    env: Mapping[str, str], os_: str, redactor: Redactor | None, min_mem_gib: float, ours: bool
) -> HostPlan | None:
    """Windows, Docker answering: another daily user's docker-users membership (with their
    VM size and sign-in start), when TRACEBLOC_DAILY_USER names one who is not in it yet."""
    if os_ != "windows" or not env.get("TRACEBLOC_DAILY_USER", "").strip():
        return None
    from installer.commands import winhost

    opts = winhost.options(env, min_mem_gib)
    _, host = winhost.survey(
        env, opts, redactor or Redactor(), our_cluster_running=ours, docker_usable=True
    )
    return host if host.steps else None
