"""Windows host preparation, the flow: survey, one elevation for the privileged half, reboot and
resume, then the daily user's half and Docker Desktop's first start. Confirmed with
install's plan; only the reboot is asked separately (default no).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from installer.commands.asking import agree
from installer.decide import elevation
from installer.decide import winget as wg
from installer.decide import winhost as wh
from installer.decide.errors import InstallerError
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.edges import docker, poll, proc
from installer.edges import winhost as edge
from installer.edges.call import NoAnswer
from installer.edges.valuesfile import read_regular, write_private

log = logging.getLogger(__name__)

STATE_FILE = "host-prep.json"
THIS_OS = os_name(sys.platform)  # "windows" in use; the tests run the flow on any OS
STATE_SCHEMA = 1
DOCKER_POLL_S = 3.0


class RebootPending(InstallerError):
    """A feature was enabled and Windows must restart before the install can go on (a
    declared hand-off, exit 2: not a failure)."""

    exit_code = wh.REBOOT_EXIT


@dataclass
class State:
    """What the host preparation has done, kept in the data directory across the reboot."""

    consented: bool = False
    done: list[str] = field(default_factory=list)
    reboot_pending: bool = False
    failed: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)  # [what, what to do]: the stop, if any
    listed: list[str] = field(default_factory=list)  # the step keys agreed to; [] = all

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "schema": STATE_SCHEMA,
                "consented": self.consented,
                "done": self.done,
                "reboot_pending": self.reboot_pending,
                "failed": self.failed,
                "stopped": self.stopped,
                "listed": self.listed,
            }
        ).encode()


def load_state(path: str) -> State:
    """The recorded state; a missing, unreadable or foreign file is a fresh start (it only
    ever skips steps the machine's own read already shows as done)."""
    try:
        raw = read_regular(path, limit=64 * 1024)
        doc = json.loads(raw) if raw else None
    except (InstallerError, ValueError):
        return State()
    if not isinstance(doc, dict) or doc.get("schema") != STATE_SCHEMA:
        return State()
    strings = lambda key: [s for s in doc.get(key) or [] if isinstance(s, str)]  # noqa: E731
    stopped = strings("stopped")
    return State(
        doc.get("consented") is True,
        strings("done"),
        doc.get("reboot_pending") is True,
        strings("failed"),
        stopped if len(stopped) == 2 else [],
        strings("listed"),
    )


def save_state(path: str, state: State, env: Mapping[str, str]) -> None:
    write_private(path, state.to_bytes(), env=env, os_=THIS_OS)


def options(env: Mapping[str, str], machine_min_mem_gib: float = 5) -> wh.Options:
    """The Windows host's settings: TRACEBLOC_DAILY_USER (-DailyUser) and
    TRACEBLOC_NO_REBOOT (-NoReboot) as the flag translation sets them,
    TB_WSL_MIN_VERSION, TB_DOCKER_WAIT_MIN, TRACEBLOC_SKIP_DAILY_USER, TRACEBLOC_NO_AUTOSTART."""
    from installer.decide.settings import env_version
    from installer.decide.yesno import flag

    return wh.options(
        env,
        daily_user=env.get("TRACEBLOC_DAILY_USER", ""),
        no_reboot=flag(env, "TRACEBLOC_NO_REBOOT", False),
        min_mem_gib=machine_min_mem_gib,
        wsl_min=env_version(env, "TB_WSL_MIN_VERSION", wh.WSL_MIN_VERSION),
    )


def engine_command() -> tuple[str, list[str]]:
    """How this engine is started again (elevated, or after a reboot): the frozen binary
    itself, or this Python with `-m installer` when run from source."""
    if getattr(sys, "frozen", False):
        return sys.executable, []
    return sys.executable, ["-m", "installer"]


def survey(
    env: Mapping[str, str],
    opts: wh.Options,
    redactor: Redactor,
    *,
    our_cluster_running: bool | None,
    docker_usable: bool | None = None,
) -> tuple[wh.WinFacts, wh.HostPlan]:
    if docker_usable is None:
        docker_usable = (
            docker.read_info(env, THIS_OS, timeout=15.0, redactor=redactor).state == "running"
        )
    facts = edge.read_facts(
        env,
        docker_usable=docker_usable,
        our_cluster_running=our_cluster_running,
        daily_user=opts.daily_user,
        redactor=redactor,
    )
    return facts, wh.plan_host(facts, opts)


def refuse_blockers(plan: wh.HostPlan) -> None:
    """Before anything changes: the first blocker stops the run with its remedy."""
    if plan.blockers:
        message, remedy = plan.blockers[0]
        more = [m for m, _ in plan.blockers[1:]]
        raise InstallerError(message, remedy + "".join(f"\nalso: {m}" for m in more))


def run_privileged(
    plan: wh.HostPlan,
    facts: wh.WinFacts,
    state: State,
    env: Mapping[str, str],
    redactor: Redactor,
    say: Callable[[str], None],
) -> State:
    """The elevated half, in this (already elevated) process. A step that fails is reported
    and the rest still run where they do not depend on it;
    Docker Desktop that could not be installed stops the run."""
    for step in plan.privileged:
        if state.listed and step.key not in state.listed:  # the machine moved since the list
            say(f"not done (it was not in the list agreed to): {step.title}")
            continue
        if step.key in wg.KEYS:  # as one unit whenever the machine's read shows no winget
            from installer.commands import winget

            env = winget.carry_out(step, facts.temp_dir, env, redactor, say)
            continue
        if step.key in state.done:
            continue
        if step.key in ("wslconfig", "autostart"):  # another account's profile
            profile = edge.profile_of(plan.user, env)
            if not profile:
                say(
                    f"{plan.user} has not signed in yet (no profile): after the first sign-in, "
                    "set Docker Desktop to start at sign-in and the [wsl2] memory by hand"
                )
            elif step.key == "wslconfig":
                say(edge.write_wslconfig(profile, plan.wslconfig_gib))
            elif _call(
                edge.startup_shortcut_argv(profile, facts.docker_desktop_exe), env, redactor
            ):
                say(f"Docker Desktop starts when {plan.user} signs in")
            state.done.append(step.key)
            continue
        outcome, rc = edge.run_step(step, env, redactor)
        if outcome == "ok":
            state.done.append(step.key)
            say(f"done: {step.title}")
        elif outcome == "reboot":
            state.done.append(step.key)
            state.reboot_pending = True
            say(f"done: {step.title} (Windows must restart to finish)")
        else:
            state.failed.append(step.key)
            code = f" (exit {rc})" if rc is not None else ""
            say(f"could not {step.title}{code}")
            if step.key == "docker-desktop":
                raise InstallerError(
                    f"Docker Desktop could not be installed{code}", wh.DOCKER_MANUAL
                )
    return state


def elevate(
    exe: str, opts: wh.Options, state_path: str, env: Mapping[str, str], redactor: Redactor
) -> State:
    """One UAC prompt: the engine's `prepare-host` elevated, waited for; its record of what it
    did is read back from the data directory (no output, no secret crosses the boundary)."""
    _, prefix = engine_command()
    argv = elevation.elevate_argv(
        exe, [*prefix, *elevation.engine_args("prepare-host", opts), "--windows-elevated"]
    )
    tool = edge.system_tool(argv[0], env)
    result = proc.run(tool, argv[1:], timeout=3 * 3600.0, env=env, redactor=redactor)
    if result.rc == elevation.DECLINED_RC:
        raise InstallerError(
            "administrator rights were not given (the Windows prompt was "
            "declined): nothing was installed",
            "run the installer again and accept the prompt, or have IT run "
            "`tracebloc-installer prepare-host --daily-user <you>` as administrator",
        )
    state = load_state(state_path)
    if result.rc not in (0, wh.REBOOT_EXIT):
        # A failure is one whatever an earlier run did (its steps stay recorded as done).
        if state.stopped:
            raise InstallerError(state.stopped[0], state.stopped[1])
        raise InstallerError(
            f"the elevated preparation failed (exit {result.rc})",
            "see the installer's log in the data directory, then re-run",
        )
    return state


def after_reboot_handoff(
    plan: wh.HostPlan,
    opts: wh.Options,
    exe: str,
    env: Mapping[str, str],
    redactor: Redactor,
    ask: Callable[[str], str] | None,
    say: Callable[[str], None],
) -> None:
    """Register the resume (this user's RunOnce: the same account signs back in), reboot only
    on a yes, and hand off with exit code 2."""
    armed = _call(elevation.resume_argv(exe, opts, tuple(engine_command()[1])), env, redactor)
    if armed:
        say("the install will resume automatically the next time you sign in")
    if opts.daily_user and armed:
        say(
            f"sign back in as this account to continue; if '{opts.daily_user}' signs in "
            "instead, run the installer again"
        )
    if not opts.no_reboot and ask is not None:
        if agree(ask, "Reboot now?"):
            _call(edge.reboot_argv(), env, redactor)
    raise RebootPending(
        "Windows must restart to finish enabling WSL and virtualization",
        elevation.reboot_words(plan, opts, armed),
    )


def run_as_user(
    plan: wh.HostPlan,
    facts: wh.WinFacts,
    opts: wh.Options,
    env: Mapping[str, str],
    redactor: Redactor,
    say: Callable[[str], None],
) -> None:
    keys = {s.key for s in plan.as_user}
    profile = edge.profile_of(plan.user, env)
    if "wslconfig" in keys and profile:
        say(edge.write_wslconfig(profile, plan.wslconfig_gib))
    if "autostart" in keys and _call(
        list(wh.autostart_argv(facts.docker_desktop_exe)), env, redactor
    ):
        say("Docker Desktop starts at sign-in")
    if "docker-start" in keys:
        wait_for_docker(facts, opts, env, redactor, say)


def wait_for_docker(
    facts: wh.WinFacts,
    opts: wh.Options,
    env: Mapping[str, str],
    redactor: Redactor,
    say: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    _call(list(wh.start_docker_argv(facts.docker_desktop_exe)), env, redactor)

    def running() -> bool:
        return docker.read_info(env, THIS_OS, timeout=15.0, redactor=redactor).state == "running"

    if poll.until(
        running, opts.docker_wait_s, DOCKER_POLL_S, at_deadline=False, clock=clock, sleep=sleep
    ).done:
        say("Docker Desktop is running")
        return
    minutes = f"{opts.docker_wait_s / 60:g}"
    raise InstallerError(
        f"Docker Desktop's engine did not come up within {minutes} minutes",
        "look for the Docker whale in the system tray and wait until it says 'Docker Desktop is "
        "running'; if it shows an error (virtualization, a WSL update) fix that first, it may "
        f"need a reboot. A first start can be slow: TB_DOCKER_WAIT_MIN raises the wait ({minutes}). "
        "Then re-run the installer",
    )


def _call(argv: list[str], env: Mapping[str, str], redactor: Redactor) -> bool:
    result = edge.system_answer(argv, env, 60.0, redactor)
    if isinstance(result, NoAnswer):
        log.warning("host: %s: %s", argv[0], result.reason)
        return False
    if result.rc != 0:
        log.warning("host: %s exited %s", " ".join(argv[:2]), result.rc)
    return result.rc == 0


def prepare(
    exe: str,
    env: Mapping[str, str],
    opts: wh.Options,
    redactor: Redactor,
    data_dir: str,
    *,
    ask: Callable[[str], str] | None,
    say: Callable[[str], None],
    our_cluster_running: bool | None,
    elevated_child: bool = False,
    resume: bool = False,
    listed: tuple[str, ...] | None = None,
    docker_usable: bool | None = None,
) -> wh.HostPlan:
    """Everything the machine needs before the local cluster, after the plan was confirmed.
    The elevated child (`prepare-host --windows-elevated`) does the privileged half only and
    records it; the parent, as the daily user, does the rest."""
    state_path = os.path.join(data_dir, STATE_FILE)
    facts, plan = survey(
        env, opts, redactor, our_cluster_running=our_cluster_running, docker_usable=docker_usable
    )
    refuse_blockers(plan)
    unlisted = [step for step in plan.steps if listed is not None and step.key not in listed]
    if unlisted:
        raise InstallerError(
            f"this Windows machine now needs to {unlisted[0].title}, which was not in the list "
            "you agreed to (its state changed since): nothing was changed",
            "run the installer again: its list then shows what this machine needs now",
        )
    if plan.tier == 0:
        if resume:
            _call(elevation.unresume_argv(), env, redactor)
        return plan
    state = load_state(state_path) if (resume or elevated_child) else State()
    state.consented, state.reboot_pending, state.failed, state.stopped = True, False, [], []
    if listed is not None:
        state.listed = list(listed)
    if plan.privileged:
        if elevated_child or facts.admin:
            try:  # what was done before a stop stays recorded, and the stop crosses to the parent
                state = run_privileged(plan, facts, state, env, redactor, say)
            except InstallerError as exc:
                state.stopped = [exc.message, exc.remedy]
                raise
            finally:
                save_state(state_path, state, env)
        else:
            save_state(state_path, state, env)
            state = elevate(exe, opts, state_path, env, redactor)
        if state.reboot_pending:
            if elevated_child:
                raise RebootPending(
                    "Windows must restart to finish enabling WSL and virtualization",
                    "the installer continues after it",
                )
            after_reboot_handoff(plan, opts, exe, env, redactor, ask, say)
    if elevated_child:
        return plan
    run_as_user(plan, facts, opts, env, redactor, say)
    if resume:
        _call(elevation.unresume_argv(), env, redactor)
    return plan
