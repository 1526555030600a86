"""Sign in through the browser and register this machine through the tracebloc CLI
(RFC-CLI-0001): `tracebloc login`, the one-client pre-flight, the name and location,
`tracebloc client create --credential-file`. The result is checked like any credentials.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from installer.config import client_name
from installer.decide import locality, signin
from installer.decide.errors import BadInput, InstallerError, Refused
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.decide.settings import credentials_given
from installer.decide.tooling import Tool
from installer.edges import tbcli

if TYPE_CHECKING:
    from installer.commands.credentials import Terminal
    from installer.decide.cluster_reads import ClusterRead
    from installer.decide.model import ListRead
    from installer.decide.settings import PlanConfig

log = logging.getLogger(__name__)
wanted = signin.wanted  # is sign-in the way credentials come (decide/signin.py)


@dataclass(frozen=True)
class Setting:
    """What a sign-in needs from the run: where to write, what is installed, who can answer."""

    data_dir: str
    installed: ListRead | None  # None: not read (a local cluster that does not exist yet)
    # The installed client releases' clientPassword, by clientId and by namespace.
    stored_passwords: Mapping[str, str] = field(default_factory=dict, repr=False)
    cluster_name: str | None = None  # the local k3d cluster, for the three choices
    kube_flags: tuple[str, ...] = ()  # --kubeconfig/--context the run was given


@dataclass(frozen=True)
class SignedIn:
    client_id: str
    password: str = field(repr=False)
    namespace: str
    adopted: bool
    name: str


def cli_tool(env: Mapping[str, str], arch: str | None = None) -> Tool | str:
    """The tracebloc CLI ready to run, or why there is none (and how to install it)."""
    from installer.commands.tools import ensure_tools, this_settings

    how = signin.CLI_INSTALL["windows" if os_name(sys.platform) == "windows" else "posix"]
    try:
        tool = ensure_tools(["tracebloc"], env, this_settings(env, arch))["tracebloc"].tool()
    except InstallerError as exc:
        return f"{exc.message}. Install it with: {how}"
    if not tbcli.supports_signin(tool, env):
        return (
            f"the tracebloc CLI at {tool.path} is too old: it has no `tracebloc login` and "
            f"`tracebloc client create`. Upgrade it with: {how}"
        )
    return tool


def sign_in(
    tool: Tool,
    env: Mapping[str, str],
    redactor: Redactor,
    *,
    terminal: Terminal | None,
    may_ask: bool,
    setting: Setting,
    say: Callable[[str], None],
) -> SignedIn:
    """The whole sign-in; raises before minting when anything is not as it must be."""
    name_given = client_name(env)
    if not name_given and not (may_ask and terminal is not None):
        raise BadInput(
            f"a name for this client is needed to register it: set {signin.NAME_VAR}",
            f"set {signin.NAME_VAR} (and optionally {signin.LOCATION_VAR}), or {signin.UNATTENDED}",
        )
    namespaces = _installed_namespaces(setting.installed)  # unreadable: refused before login
    say(
        "Sign in to approve this machine: open the link below in your browser (on this or any "
        "device) and enter the code."
    )
    _login(tool, env, terminal)
    _preflight(tool, env, redactor, namespaces, setting)
    name = name_given or _ask_name(terminal)
    where = system_location(env)
    if where.source == "time zone":
        say(
            f"location {where.code} (from the time zone {where.zone}; set "
            f"{signin.LOCATION_VAR} to choose another)"
        )
    minted = _create(tool, env, redactor, name, where, setting)
    if minted.adopted:
        # By client id, else by the namespace it runs in.
        stored = setting.stored_passwords.get(
            f"id:{minted.client_id}"
        ) or setting.stored_passwords.get(f"ns:{minted.namespace}")
        if not stored:
            raise InstallerError(
                f"this cluster is already registered as client {minted.client_id!r} (namespace "
                f"{minted.namespace}), but its stored password could not be read",
                "re-run with that client's TRACEBLOC_CLIENT_ID and TRACEBLOC_CLIENT_PASSWORD",
            )
        say(
            f"this cluster is already registered (client {minted.client_id}): reconciling the "
            "installed release, keeping its stored password"
        )
        return SignedIn(minted.client_id, stored, minted.namespace, True, name)
    assert minted.password is not None  # parse_credential requires it when not adopted
    redactor.add(minted.password)
    say(f'registered as "{minted.namespace}"')
    return SignedIn(minted.client_id, minted.password, minted.namespace, False, name)


def system_location(env: Mapping[str, str]) -> signin.Location:
    """TRACEBLOC_CLIENT_LOCATION, else the time zone's country. Windows has no zone table:
    none is derived there."""
    if os_name(sys.platform) == "windows":
        return signin.location(credentials_given(env).location, None, ())
    return signin.location(
        credentials_given(env).location, tbcli.system_zone(env), tbcli.zone_tables()
    )


def _installed_namespaces(listing: ListRead | None) -> list[str]:
    if listing is None:
        return []
    if not listing.readable:
        raise Refused(
            f"could not read which tracebloc clients are installed ({listing.reason})",
            "nothing was registered: tracebloc runs one client per machine, and a new "
            "one could strand an existing client nobody could see. Check access "
            "(kubectl cluster-info; helm list -A) and re-run",
        )
    return sorted({r.namespace for r in listing.releases if r.chart_name == "client"})


def _login(tool: Tool, env: Mapping[str, str], terminal: Terminal | None) -> None:
    fds = _descriptors(terminal)
    for attempt in range(1, signin.LOGIN_TRIES + 1):
        if tbcli.login(tool, env, fds) == 0:
            return
        if attempt == signin.LOGIN_TRIES or terminal is None:
            break
        terminal.say(
            "\nSign-in did not complete: the code lapsed or was not approved. Nothing "
            "is lost: the install is paused here, not restarted."
        )
        try:
            terminal.ask("Press Enter for a fresh code (or Ctrl-C to stop): ")
        except (EOFError, OSError):
            break
    raise InstallerError(
        "sign-in did not complete",
        f"re-run the installer to try again, or {signin.UNATTENDED} for an install without sign-in",
    )


def _descriptors(terminal: Terminal | None) -> tuple[int, int] | None:
    get = getattr(terminal, "descriptors", None)
    return get() if callable(get) else None


def _preflight(
    tool: Tool, env: Mapping[str, str], redactor: Redactor, namespaces: list[str], setting: Setting
) -> None:
    """One client per machine: an installed client the account provably does not own stops the
    run before anything is minted. An unreadable list proves nothing."""
    if not namespaces:
        return
    listed = tbcli.list_clients(tool, env, redactor)
    if not listed.readable:
        log.info("client list unreadable: ownership is left to client create and the guard")
        return
    for namespace in signin.foreign(namespaces, listed.text):
        raise Refused(
            f"this machine already runs a tracebloc client (namespace {namespace}) "
            "that is not in the account you signed in as",
            signin.three_choices(namespace, setting.cluster_name),
        )


def _ask_name(terminal: Terminal | None) -> str:
    assert terminal is not None  # sign_in checked: no name and nobody to ask is BadInput
    for _ in range(signin.NAME_TRIES):
        try:
            raw = terminal.ask("Name your secure environment (shown on your tracebloc dashboard): ")
        except (EOFError, OSError):
            break
        name = signin.clean_name(raw)
        if name:
            return name
    raise BadInput(
        "a name for this client is needed to register it: none was given",
        f"re-run in a terminal to be asked, or set {signin.NAME_VAR}",
    )


def _create(
    tool: Tool,
    env: Mapping[str, str],
    redactor: Redactor,
    name: str,
    where: signin.Location,
    setting: Setting,
) -> signin.Minted:
    # The CLI reads these itself as defaults: the flags decide, so none may disagree.
    child = {k: v for k, v in env.items() if k not in (signin.NAME_VAR, signin.LOCATION_VAR)}
    with tbcli.credential_file(setting.data_dir) as path:
        argv = tbcli.create_argv(name, path, where.code, setting.kube_flags)
        created = tbcli.create(tool, argv, child, redactor)
        if created.rc != 0:
            log.info("tracebloc client create: exit %d\n%s", created.rc, redactor(created.output))
            lines = signin.create_failure(created.output, where.code, where.source)
            detail = "; ".join(lines) if lines else "it gave no reason"
            raise InstallerError(
                f"this machine could not be registered (tracebloc client "
                f"create, exit {created.rc}): {detail}",
                "re-run to retry (on the same cluster it adopts what it "
                "registered); the log has the CLI's full output",
            )
        minted = tbcli.read_credential(path)
    if minted.password:
        redactor.add(minted.password)
    log.info("tracebloc client create: exit 0\n%s", redactor(created.output))
    return minted


def stored_passwords(values: Mapping[Any, Any]) -> dict[str, str]:
    """The clientPassword of each installed client release whose values were read, keyed
    `id:<clientId>` and `ns:<namespace>`."""
    out = {}
    for read in values.values():
        found = getattr(read, "values", {})
        password, client_id = found.get("clientPassword"), found.get("clientId")
        if isinstance(password, str) and password:
            out[f"ns:{read.namespace}"] = password
            if isinstance(client_id, str) and client_id:
                out[f"id:{client_id}"] = password
    return out


# --- the hook credentials.obtain calls ------------------------------------------------------


def can_sign_in(env: Mapping[str, str], terminal: Terminal | None) -> bool:
    """Someone at a terminal, and a CLI that can sign in."""
    return terminal is not None and isinstance(cli_tool(env), Tool)


def precheck(env: Mapping[str, str], *, interactive: bool, terminal: Terminal | None) -> None:
    """What stops a sign-in before anything is done for it (before a local cluster is made,
    too): nobody at a terminal is exit 2 naming the unattended variables."""
    if terminal is None:
        why = "--yes never prompts" if not interactive else "there is no terminal"
        raise BadInput(
            "no credentials, and no terminal to sign in through the browser on",
            f"{why}: {signin.UNATTENDED}",
        )


def hook(
    env: Mapping[str, str],
    redactor: Redactor,
    *,
    interactive: bool,
    terminal: Terminal | None,
    setting: Setting,
    say: Callable[[str], None],
    warn: Callable[[str], None],
) -> Callable[[], SignedIn | None]:
    """credentials.obtain's sign-in: SignedIn, or None when the CLI cannot be had (then the other
    ways go on). Nobody at a terminal: BadInput naming the unattended variables, never a hang."""

    def run() -> SignedIn | None:
        precheck(env, interactive=interactive, terminal=terminal)
        tool = cli_tool(env)
        if isinstance(tool, str):
            warn(f"browser sign-in is not available: {tool}")
            return None
        return sign_in(
            tool, env, redactor, terminal=terminal, may_ask=interactive, setting=setting, say=say
        )

    return run


def setting_for(cfg: PlanConfig, cluster: ClusterRead | None) -> Setting:
    """The sign-in's view of this run. Without a cluster read (a local cluster created by
    this run) nothing is installed: the cluster did not exist."""
    kube = tuple(cfg.probe.conn.kubectl_flags())
    if cluster is None:
        from installer.decide.model import ListRead

        return Setting(cfg.host_data_dir, ListRead(True), kube_flags=kube)
    # The k3d cluster's name only for a k3d context shown to be on this machine (the one
    # locality decision): a k3d- context at another address is not ours to name.
    context = cluster.target.context or ""
    here = locality.where(cluster.target, cluster.nodes).local is True
    local = context.removeprefix("k3d-") if here and context.startswith("k3d-") else None
    return Setting(
        cfg.host_data_dir,
        cluster.listing,
        stored_passwords(cluster.values),
        cluster_name=local,
        kube_flags=kube,
    )


def with_namespace(cfg: PlanConfig, namespace: str | None) -> PlanConfig:
    """The minted namespace becomes the namespace and the release (as TB_NAMESPACE would)."""
    import dataclasses

    from installer.config import validate_namespace

    if not namespace or namespace == cfg.probe.namespace:
        return cfg
    probe = dataclasses.replace(
        cfg.probe,
        namespace=validate_namespace(namespace, "TB_NAMESPACE of the credential file"),
        release_name=None,
    )
    return dataclasses.replace(cfg, probe=probe)


def plan_note(cfg: PlanConfig, env: Mapping[str, str]) -> str | None:
    """What `plan` says of a sign-in `install` would run (it runs none, and downloads nothing)."""
    from installer.commands.credentials import previous_credentials
    from installer.commands.tools import resolve_tool
    from installer.edges.valuesfile import load_yaml
    from installer.present.tools import choice_text

    doc = None if cfg.values_given else load_yaml(cfg.values_path, required=False)
    previous = previous_credentials(doc if isinstance(doc, dict) else None)
    if cfg.client_id or not signin.wanted(
        credentials_given(env), values_given=cfg.values_given, previous=previous
    ):
        return None
    name = client_name(env)
    where = system_location(env)
    named = f"as {name!r}" if name else "under a name asked on the terminal (TRACEBLOC_CLIENT_NAME)"
    located = {
        "env": f"location {where.code} (TRACEBLOC_CLIENT_LOCATION)",
        "time zone": f"location {where.code} (from the time zone {where.zone})",
        "none": "no location",
    }[where.source]
    choice = resolve_tool("tracebloc", env)
    if choice.source is None:
        cli = f"the tracebloc CLI is not available ({choice.problem}), so install would ask for a client id and password instead"  # noqa: E501
    else:
        cli = f"with {choice_text(choice)}"
    return (
        f"install signs you in through the browser (tracebloc login) and registers this "
        f"machine {named}, {located}; {cli}; with --yes and no terminal it stops: "
        f"{signin.UNATTENDED}"
    )
