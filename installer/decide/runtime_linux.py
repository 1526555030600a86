"""The Linux privileged flow as a list of steps: Docker (its packages: decide/docker_packages.py),
the docker group, kernel modules, the daemon's drop-ins (proxy, CA), its start. Pure."""

from __future__ import annotations

from installer.decide.docker_packages import admins_file, install_steps, key_files, repository_files
from installer.decide.runtime import (
    CA_DIR,
    CA_DROPIN,
    DOCKER_GROUP,
    DROPIN_DIR,
    KERNEL_MODULES,
    MODULES_FILE,
    PREPARE_HOST,
    PRIVILEGED,
    PROXY_DROPIN,
    STAGED,
    START_WAIT_S,
    Facts,
    RuntimePlan,
    Step,
    ca_dropin,
    distro,
    no_sudo,
    proxy_dropin,
    streamed,
    sudo_prime,
)

BOOT_STEP = Step(("systemctl", "enable", "docker"), "start Docker at boot", optional=True)


def decide_linux(facts: Facts, *, mode: str, target_user: str) -> RuntimePlan:
    refusal = no_sudo(facts)
    if refusal is not None:
        return RuntimePlan(PRIVILEGED, "no-sudo", refusal=refusal)
    if "systemctl" not in facts.tools:
        return RuntimePlan(
            PRIVILEGED,
            "no-systemd",
            refusal=(
                "Docker is not usable here and this machine has no systemd to start it with",
                "install Docker Engine yourself (https://docs.docker.com/engine/install/), start "
                "it, then run the installer again",
            ),
        )
    grant = (target_user.strip() if mode == PREPARE_HOST else facts.user).strip()
    if grant == "root":
        grant = ""
    install: tuple[Step, ...] = ()
    kept: list[str] = []
    reason = "docker-stopped"
    if not facts.docker_cli:
        reason = "docker-missing"
        found = install_steps(facts)
        if found is None:
            ident = distro(facts.os_release)[0] or "unknown"
            return RuntimePlan(
                PRIVILEGED,
                "unsupported-distribution",
                refusal=(
                    f"cannot install Docker on this distribution ({ident}) by itself",
                    "install Docker Engine (https://docs.docker.com/engine/install/), then run "
                    "the installer again",
                ),
            )
        install = found
        source = admins_file(facts, *repository_files(facts))
        if source is not None and source[1] == "dangling":
            return RuntimePlan(
                PRIVILEGED,
                "dangling-link",
                refusal=dangling(
                    source[0], "the package repository Docker should be installed from"
                ),
            )
        if source is not None:
            kept.append(
                f"{source[0]} ({described(source[1])}): Docker is installed from the "
                "repository it names"
            )
        key = None if source is not None else admins_file(facts, *key_files(facts))
        if key is not None and key[1] == "dangling":
            return RuntimePlan(
                PRIVILEGED, "dangling-link", refusal=dangling(key[0], "Docker's signing key")
            )
        if key is not None:
            kept.append(
                f"{key[0]} ({described(key[1])}): Docker's packages are checked "
                "against the key it holds"
            )
    elif facts.docker == "stopped" and "permission denied" in facts.docker_reason.lower():
        reason = "no-socket-access"
    for path in written_dropins(facts):
        mine = admins_file(facts, path)
        if mine is not None and mine[1] == "dangling":
            return RuntimePlan(
                PRIVILEGED,
                "dangling-link",
                refusal=dangling(path, "the settings Docker's daemon should use"),
            )
        if mine is not None:
            kept.append(
                f"{path} ({described(mine[1])}): Docker's daemon keeps its settings; "
                "tracebloc's are not written"
            )
    steps: list[Step] = [*sudo_prime(facts), *install]
    # A Docker the engine installs or starts is enabled at boot (scripts/lib/cluster.sh's
    # ensure_cluster_autostart did both): a rebooted machine brings the client back.
    if install or (
        mode != PREPARE_HOST and not facts.no_autostart and facts.boot_enabled != "enabled"
    ):
        steps.append(BOOT_STEP)
    needs_grant = grant and (mode == PREPARE_HOST or facts.in_docker_group is not True)
    if needs_grant:
        # `--`: a name is never read as an option. A grant that fails, or that the account
        # database does not show afterwards, is the run's failure, never announced.
        steps += [
            Step(
                ("usermod", "-aG", DOCKER_GROUP, "--", grant),
                f"let {grant} use Docker (the docker group)",
            ),
            Step(
                ("id", "-nG", "--", grant),
                f"check that {grant} is in the docker group",
                root=False,
                kind="member",
                content=DOCKER_GROUP,
                timeout=30,
            ),
        ]
    # Every privileged run loads the modules and lists them for boot, a running daemon this
    # user cannot reach too: the daemon may be restarted in this run, or after a reboot.
    steps += module_steps(facts)
    steps += daemon_config_steps(facts)
    steps += [
        Step(
            ("systemctl", "reset-failed", "docker"),
            "clear a failed start of an earlier try",
            optional=True,
        ),
        Step(
            ("systemctl", "start", "docker"), "start the Docker daemon", timeout=120, optional=True
        ),
    ]
    if mode == PREPARE_HOST:
        steps += [
            Step(
                ("docker", "info", "--format", "{{.ServerVersion}}"),
                "check that the daemon answers",
                kind="wait-docker",
                timeout=START_WAIT_S,
            ),
            BOOT_STEP,
        ]
    else:
        steps.append(
            Step(
                ("docker", "info", "--format", "{{json .}}"),
                "check that Docker answers as you",
                root=False,
                kind="wait-docker",
                timeout=START_WAIT_S,
            )
        )
    notes: tuple[str, ...] = ()
    if mode == PREPARE_HOST and not grant:
        notes = (
            "no user was named (TB_PREPARE_USER): nobody was added to the docker group; "
            "add one with: sudo usermod -aG docker <user>",
        )
    return RuntimePlan(
        PRIVILEGED,
        reason,
        tuple(map(streamed, steps)),
        grant_user=grant if needs_grant else "",
        notes=notes,
        kept=tuple(kept),
    )


def described(state: str) -> str:
    return "a symbolic link" if state == "link" else "not written by tracebloc"


def dangling(path: str, what: str) -> tuple[str, str]:
    return (
        f"{path} is a symbolic link to a file that does not exist; tracebloc does not "
        "replace a file it did not write",
        f"remove the link (sudo rm {path}) for tracebloc to write its own, or point it at "
        f"{what}, then run again",
    )


def written_dropins(facts: Facts) -> tuple[str, ...]:
    """The daemon's drop-ins this run writes (a removal of the engine's own is no write)."""
    return ((PROXY_DROPIN,) if proxy_dropin(facts.proxy) is not None else ()) + (
        (CA_DROPIN,) if facts.ca_pem else ()
    )


def module_steps(facts: Facts) -> tuple[Step, ...]:
    """The kernel modules Docker's bridge and k3s need:
    loaded now, kernel-modules-extra on dnf hosts when one does not load, and listed for
    boot."""
    extra = ("dnf", "install", "-y", "-q", "kernel-modules-extra") if "dnf" in facts.tools else ()
    return (
        Step(
            ("modprobe", "-a", *KERNEL_MODULES),
            "load the kernel modules Docker and k3s need"
            + (" (kernel-modules-extra when one is missing)" if extra else ""),
            kind="modules",
            content=" ".join(extra),
            optional=True,
        ),
        Step(
            ("install", "-m", "0644", STAGED, MODULES_FILE),
            "load them at boot too",
            kind="stage",
            content="".join(f"{m}\n" for m in KERNEL_MODULES),
            optional=True,
        ),
    )


def daemon_config_steps(facts: Facts) -> tuple[Step, ...]:
    """The daemon's proxy (owner-only: it may hold the proxy password) and the corporate
    CA, each a systemd drop-in, then daemon-reload. A running daemon is restarted by the
    start step only if it was stopped; a changed file restarts it."""
    steps: list[Step] = []
    dropin = proxy_dropin(facts.proxy)
    if dropin is not None or facts.ca_pem:
        steps.append(
            Step(
                ("install", "-m", "0755", "-d", DROPIN_DIR),
                "a directory for Docker's systemd settings",
            )
        )
    if dropin is not None:
        steps.append(
            Step(
                ("install", "-m", "0600", STAGED, PROXY_DROPIN),
                "the proxy for Docker's image pulls (owner-only: it may hold the proxy password)",
                kind="stage",
                content=dropin,
                secret=True,
                guard="ours",
            )
        )
    else:
        # No proxy set: a drop-in an earlier run
        # wrote would keep dockerd pulling through a proxy that is gone.
        steps.append(
            Step(
                ("rm", "-f", PROXY_DROPIN),
                "remove the proxy an earlier run gave Docker (no proxy is set now)",
                optional=True,
                guard="ours",
            )
        )
        if not facts.ca_pem:
            return (*steps, *_reload(when=f"changed:{PROXY_DROPIN}"))
    if facts.ca_pem:
        steps += [
            Step(("install", "-m", "0755", "-d", CA_DIR), "a directory for the corporate CA"),
            Step(
                ("install", "-m", "0644", STAGED, f"{CA_DIR}/ca.crt"),
                "the corporate CA (TRACEBLOC_CA_BUNDLE's certificates, as you read them), "
                "for Docker's image pulls only",
                kind="stage",
                content=facts.ca_pem,
            ),
            Step(
                ("install", "-m", "0644", STAGED, CA_DROPIN),
                "Docker trusts it",
                kind="stage",
                content=ca_dropin(),
                guard="ours",
            ),
        ]
    return (*steps, *_reload())


def _reload(when: str = "") -> tuple[Step, ...]:
    """daemon-reload (always, or `when`), then a running daemon restarted only when a file
    changed (`when` names which, else any)."""
    return (
        Step(
            ("systemctl", "daemon-reload"),
            "systemd reads the new settings",
            optional=True,
            when=when,
        ),
        Step(
            ("systemctl", "try-restart", "docker"),
            "a running daemon takes them",
            timeout=120,
            optional=True,
            when=when or "changed",
        ),
    )


__all__ = ["decide_linux"]
