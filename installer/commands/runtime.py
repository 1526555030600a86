"""The container runtime step: survey (reads only; what `plan` shows), carry out (after the
one confirmation), and `prepare-host` (the privileged half alone). When `docker info`
answers as this user, `survey` returns None and nothing privileged is read or run.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from installer.decide import runtime as rt
from installer.decide.drift import DockerRead
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import MachineFacts
from installer.decide.redact import Redactor
from installer.decide.runtime_macos import autostart_steps
from installer.decide.runtime_route import decide
from installer.decide.settings import runtime_given
from installer.decide.yesno import flag
from installer.edges import docker
from installer.edges.runtime import Runner, execute
from installer.present.ui import Ui


def read_facts(
    env: Mapping[str, str], os_: str, info: DockerRead, machine: MachineFacts, timeout: float
) -> rt.Facts:
    given = runtime_given(env)  # the variables, read once (decide/settings.py)
    if os_ == "darwin":
        from installer.edges import runtime_macos

        return runtime_macos.read_facts(env, info, machine, timeout=timeout, given=given)
    if os_ == "linux":
        from installer.edges import runtime_linux

        return runtime_linux.read_facts(env, info, machine, timeout=timeout, given=given)
    return rt.Facts(os=os_, docker=info.state, docker_reason=info.reason)


def survey(
    env: Mapping[str, str],
    os_: str,
    info: DockerRead,
    machine: MachineFacts,
    *,
    timeout: float,
    mode: str = rt.INSTALL,
    target_user: str = "",
) -> rt.RuntimePlan | None:
    """None at tier 0 (Docker answers as this user): nothing to do, nothing more read."""
    if info.state == "running" and mode == rt.INSTALL:
        return None
    facts = read_facts(env, os_, info, machine, timeout)
    plan = dataclasses.replace(
        decide(facts, mode=mode, target_user=target_user), as_root=as_root(env)
    )
    plan = _test_key(plan, env)
    if (
        os_ == "darwin"
        and plan.refusal is None
        and plan.steps
        and mode == rt.INSTALL
        and not flag(env, "TRACEBLOC_NO_AUTOSTART")
    ):
        colima = any("colima" in s.argv[:3] for s in plan.steps)
        home = env.get("HOME", "").strip()
        headless = facts.gui is False
        # A headless Mac's LaunchDaemon needs root: only where this plan already asks for it.
        primed = any(s.kind == "prime" for s in plan.steps)
        if home and (not headless or (colima and (facts.uid == 0 or primed or facts.admin))):
            primes = rt.sudo_prime(facts) if headless and not primed else ()
            from installer.decide.runtime_macos import colima_path, launch_daemons_dir

            plan = dataclasses.replace(
                plan,
                steps=(
                    *primes,
                    *plan.steps,
                    *autostart_steps(
                        home,
                        facts.uid,
                        colima_path(facts) if colima else "",
                        headless=headless,
                        user=facts.user,
                        daemons=launch_daemons_dir(env),
                    ),
                ),
            )
    return plan


def tier0_autostart(env: Mapping[str, str], os_: str, info: DockerRead) -> tuple[rt.Step, ...]:
    """Docker already answers: a desktop Mac (LaunchAgent) or someone else's Docker Desktop on
    Windows (Run key) still gets the login autostart, as this user. Nothing privileged."""
    if flag(env, "TRACEBLOC_NO_AUTOSTART"):
        return ()
    if os_ == "windows":
        return _windows_autostart(env)
    if os_ != "darwin":
        return ()
    from installer.decide.runtime_macos import colima_path
    from installer.edges import autostart, runtime_macos
    from installer.edges.runtime_linux import user_name

    home = env.get("HOME", "").strip()
    if not home or runtime_macos.has_gui_session() is False:
        return ()
    if os.path.isfile(autostart.mac_plist(env, headless=False)):
        return ()
    uid = os.getuid() if hasattr(os, "getuid") else 0
    facts = runtime_macos.tier0_facts(env, uid, user_name(env, uid))
    desktop = "docker desktop" in info.operating_system.lower()
    if not desktop and not facts.colima_path:
        return ()  # a runtime the engine cannot name: nothing promised
    return autostart_steps(home, uid, "" if desktop else colima_path(facts))


TEST_KEY = "TB_TEST_DOCKER_APT_KEY_FPR"


def _test_key(plan: rt.RuntimePlan, env: Mapping[str, str]) -> rt.RuntimePlan:
    """Tests only: the apt signing key's expected fingerprint replaced (a test key stands
    in for Docker's), honoured only with the test user seam and a TRACEBLOC_TOOLS_MIRROR
    directory on this machine, as TB_TEST_TOOLS_MANIFEST is."""
    return test_key(plan, env, TEST_KEY)


def test_key(plan: rt.RuntimePlan, env: Mapping[str, str], variable: str) -> rt.RuntimePlan:
    """Every OpenPGP check of `plan` expects `variable`'s fingerprint instead (Docker's
    TB_TEST_DOCKER_APT_KEY_FPR, NVIDIA's TB_TEST_NVIDIA_KEY_FPR), under the same conditions."""
    fpr = env.get(variable, "").strip().upper()
    if not fpr:
        return plan
    from installer.edges.runtime_linux import test_user
    from installer.edges.tools import parse_mirror

    mirror = parse_mirror(env)
    if test_user(env) is None or mirror is None or mirror.kind != "dir":
        raise BadInput(
            f"{variable} is for tests only", "unset it (it needs the test seams and a local mirror)"
        )
    steps = tuple(
        dataclasses.replace(s, check=f"openpgp:{fpr}") if s.check.startswith("openpgp:") else s
        for s in plan.steps
    )
    return dataclasses.replace(plan, steps=steps)


def refuse_sudo_wrapped(env: Mapping[str, str], os_: str) -> None:
    """A whole install as root (uid 0 with
    SUDO_USER) would grant Docker to root and root-own the user's files. A genuine root
    login (no SUDO_USER) is fine."""
    sudo_user = env.get("SUDO_USER", "").strip()
    if os_ != "windows" and as_root(env) and sudo_user and sudo_user != "root":
        raise InstallerError(*rt.sudo_wrapped(sudo_user))


def as_root(env: Mapping[str, str] | None = None) -> bool:
    if env is not None and os.name != "nt":
        from installer.edges.runtime_linux import test_user

        pretend = test_user(env)
        if pretend is not None:
            return pretend[1] == 0
    return hasattr(os, "getuid") and os.getuid() == 0


def lines(plan: rt.RuntimePlan) -> list[str]:
    return rt.plan_lines(plan)


def _windows_autostart(env: Mapping[str, str]) -> tuple[rt.Step, ...]:
    from installer.decide.winhost import autostart_argv
    from installer.edges import autostart

    base = env.get("ProgramFiles", "").strip()
    exe = os.path.join(base or r"C:\Program Files", "Docker", "Docker", "Docker Desktop.exe")
    if not os.path.isfile(exe) or autostart.runtime_starts(env, "windows", timeout=10):
        return ()
    return (
        rt.Step(
            autostart_argv(exe),
            "start Docker Desktop when you sign in",
            root=False,
            optional=True,
            timeout=30,
        ),
    )


def carry_out_boot(
    steps: tuple[rt.Step, ...], env: Mapping[str, str], redactor: Redactor, ui: Ui
) -> list[str]:
    """Tier 0's autostart steps (tier0_autostart), as the plan listed them: as this user, a
    failure a warning."""
    if not steps:
        return []
    plan = rt.RuntimePlan(rt.TIER0, "runtime-usable", steps)
    return execute(plan, Runner(env, redactor, as_root(env), say=ui.info, warn=ui.warn))


def carry_out(
    plan: rt.RuntimePlan, env: Mapping[str, str], redactor: Redactor, ui: Ui
) -> list[str]:
    """Every step, in order; raises at the first required one that fails."""
    if plan.refusal is not None:
        raise InstallerError(*plan.refusal)
    from installer.edges.runtime_linux import OS_RELEASE_SEAM, test_user

    if test_user(env) is not None:
        ui.warn(f"tests only: {OS_RELEASE_SEAM} and the test user are set")
    runner = Runner(env, redactor, plan.as_root, say=ui.info, warn=ui.warn)
    # The password prompt first, on its own: a spinner must not draw over it.
    primes = tuple(s for s in plan.steps if s.kind == "prime")
    done = execute(dataclasses.replace(plan, steps=primes), runner) if primes else []
    rest = dataclasses.replace(plan, steps=tuple(s for s in plan.steps if s.kind != "prime"))
    from contextlib import nullcontext

    from installer.edges.sudo_keepalive import keepalive

    # The password was asked for: its ticket is kept fresh until the last root step.
    kept = keepalive(env) if primes and not plan.as_root else nullcontext()
    with kept, ui.step("Setting up the container runtime (Docker)"):
        done = [
            *done,
            *execute(rest, Runner(env, redactor, plan.as_root, say=ui.info, warn=ui.warn)),
        ]
    for note in plan.notes:
        ui.info(note)
    return done


def prepare_host(
    env: Mapping[str, str],
    redactor: Redactor,
    ui: Ui,
    os_: str,
    machine: MachineFacts,
    timeout: float,
    target: str,
) -> list[str]:
    """The privileged half only, for `target` (TB_PREPARE_USER); the administrator's sudo is
    the consent, so nothing is asked. Returns what was done."""
    if os_ != "linux":
        raise InstallerError(
            "prepare-host is for Linux hosts",
            "on macOS install Docker Desktop (or colima) as an administrator, "
            "then run the installer as yourself",
        )
    if target:
        from installer.edges.runtime_linux import account_exists

        if account_exists(target) is False:  # before anything runs: usermod would only fail
            raise BadInput(
                f"TB_PREPARE_USER={target!r} names no account on this machine",
                "check the name (getent passwd NAME), or create the account first, then run again",
            )
    info = docker.read_info(env, os_, timeout=timeout, redactor=redactor)
    plan = survey(
        env, os_, info, machine, timeout=timeout, mode=rt.PREPARE_HOST, target_user=target
    )
    assert plan is not None
    if plan.refusal is not None:
        raise InstallerError(*plan.refusal)
    for line in lines(plan):
        ui.info(f"  {line}")
    return carry_out(plan, env, redactor, ui)
