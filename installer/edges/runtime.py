"""Carry out a runtime plan (decide/runtime.py): each step through proc, bounded, logged
masked; root steps through `sudo -n`. Files for root reach it on stdin (`install -m MODE
/dev/stdin DEST`); downloads are checked (fingerprint or SHA-256) before use.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from installer.decide.errors import ToolNotFound, ToolTimeout
from installer.decide.redact import Redactor
from installer.decide.runtime import (
    DOCKER_GROUP,
    STAGED,
    STDIN,
    RuntimePlan,
    Step,
    granted_line,
    shown,
)
from installer.decide.tooling import Tool
from installer.edges import call, childio, poll, proc, runtime_files, tempdirs, toolpath
from installer.edges.call import Caller, NoAnswer
from installer.edges.runtime_files import RuntimeFailed

log = logging.getLogger(__name__)

POLL_S = 2.0
LOCK_POLL_S = 5.0


@dataclass
class Runner:
    env: Mapping[str, str]
    redactor: Redactor
    as_root: bool  # uid 0: no sudo at all
    say: Callable[[str], None]
    warn: Callable[[str], None]
    sleep: Callable[[float], None] = time.sleep
    done: list[str] = field(default_factory=list)
    changed: bool = False
    touched: set[str] = field(default_factory=set)  # the guarded files written or removed
    _stage: str = ""

    def tool(self, name: str) -> Tool:
        return toolpath.find_tool(name, self.env, "linux" if os.name != "nt" else "windows")

    def _argv(self, step: Step, argv: tuple[str, ...]) -> tuple[Tool, list[str]]:
        if step.root and not self.as_root:
            return self.tool("sudo"), ["-n", *argv]
        return self.tool(argv[0]), list(argv[1:])

    def answer(
        self,
        step: Step,
        argv: tuple[str, ...],
        timeout: float | None = None,
        data: bytes | None = None,
    ) -> proc.Result | NoAnswer:
        """The step run (a root step through `sudo -n`), or why there is no result; `data`
        is its stdin."""
        try:
            tool, args = self._argv(step, argv)
        except ToolNotFound as exc:
            return NoAnswer(exc.message, exc)
        return Caller(self.env, self.redactor, timeout or step.timeout).answer(
            tool, args, keep_terminal=True, input=data
        )

    def succeeds(self, step: Step, argv: tuple[str, ...], timeout: float | None = None) -> bool:
        """It ran and exited 0 (no answer at all is not a success)."""
        result = self.answer(step, argv, timeout)
        return not isinstance(result, NoAnswer) and result.rc == 0

    def staged(self, name: str) -> str:
        if not self._stage:
            self._stage = tempdirs.make("runtime")
        return os.path.join(self._stage, name)

    def cleanup(self) -> None:
        if self._stage:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._stage = ""


def execute(
    plan: RuntimePlan, runner: Runner, *, fetch: Callable[[str, str], None] | None = None
) -> list[str]:
    """Run every step in order; returns what was done, one line each. Raises RuntimeFailed
    at the first required step that fails."""
    try:
        for index, step in enumerate(plan.steps):
            if (step.when == "changed" and not runner.changed) or (
                step.when.startswith("changed:") and step.when[8:] not in runner.touched
            ):
                log.debug("skipped (nothing changed): %s", shown(step, runner.as_root))
                continue
            _one(step, index, plan, runner, fetch or runtime_files.download(runner.env))
    finally:
        runner.cleanup()
    return runner.done


def _one(
    step: Step, index: int, plan: RuntimePlan, run: Runner, fetch: Callable[[str, str], None]
) -> None:
    argv = step.argv
    if step.kind == "fetch" and STDIN in argv:  # a key: checked, then what root reads on stdin
        step = runtime_files.fetched_key(step, index, run.staged, fetch)
    if step.kind == "prime":
        _prime(run, step)
        return
    if step.kind == "wait-lock":
        _wait_lock(run, step)
        return
    if step.kind == "wait-docker":
        _wait_docker(run, step, plan)
        return
    if step.kind == "member":
        _member(run, step)
        return
    path = STDIN
    if step.kind in ("stage", "fetch") and STDIN not in argv:
        path = run.staged(f"{index}-{os.path.basename(argv[-1]) or 'file'}")
        if step.kind == "stage":
            runtime_files.write_private(path, step.content.encode())
        else:
            fetch(step.url, path)
            runtime_files.check(step, path, fetch, run.staged)
        argv = tuple(path if part == STAGED else part for part in argv)
    if step.guard:  # only the engine's own file is written or removed (edges/runtime_guard.py)
        from installer.edges.runtime_guard import guarded

        guarded(run, step, argv, _run, _same_as)
        return
    if step.kind in ("stage", "fetch"):
        if step.root and argv[0] == "install" and _same_as(run, step, path, argv[-1]):
            run.done.append(f"{argv[-1]} is already as wanted")
            return
    if step.kind == "modules":
        _modules(run, step)
        return
    if _run(run, step, argv) and (step.kind == "stage" or (step.kind == "fetch" and step.root)):
        run.changed = True


def _fed(step: Step, argv: tuple[str, ...]) -> bytes | None:
    """A streamed "stage" step's stdin: its content (decide/runtime.streamed)."""
    return step.content.encode() if step.kind == "stage" and STDIN in argv else None


def _run(run: Runner, step: Step, argv: tuple[str, ...]) -> bool:
    text = shown(Step(argv, step.why, root=step.root), run.as_root)
    run.say(f"{step.why}: {text}")
    result = run.answer(step, argv, data=_fed(step, argv))
    if isinstance(result, NoAnswer):
        if result.timed_out:
            return _failed(run, step, text, f"did not finish within {step.timeout:g}s")
        if result.error is not None and not isinstance(result.error, ToolNotFound):
            raise result.error  # a secret on a command line is a bug, not a failed step
        return _failed(run, step, text, result.reason)
    if result.rc != 0:
        return _failed(
            run,
            step,
            text,
            childio.last_line(run.redactor(result.stderr or result.stdout), result.rc),
        )
    run.done.append(text)
    return True


def _failed(run: Runner, step: Step, text: str, why: str) -> bool:
    if step.optional:
        run.warn(f"`{text}` failed ({why}); going on")
        return False
    raise RuntimeFailed(
        f"`{text}` failed: {why}",
        "fix the reported problem, then run again (what was done stays done)",
    )


def _prime(run: Runner, step: Step) -> None:
    run.say("tracebloc needs your password once to set up Docker (sudo)")
    try:
        rc = proc.run(
            run.tool("sudo"), ["-v"], timeout=step.timeout, env=run.env, terminal="attached"
        ).rc
    except ToolTimeout:
        rc = -1
    if rc != 0:
        raise RuntimeFailed(
            "could not get administrator rights (sudo authentication failed)",
            "run again as a user allowed to use sudo, or ask an administrator "
            "to run: sudo TB_PREPARE_USER=<your user> tracebloc-installer "
            "prepare-host",
        )
    run.done.append("sudo -v")


def _wait_lock(run: Runner, step: Step) -> None:
    """While a background update holds the dpkg/apt locks,
    wait (bounded); apt's own DPkg::Lock::Timeout is the backstop for a later holder."""
    if toolpath.find_on_path("fuser", run.env, "linux") is None:
        return
    announced = False

    def held() -> bool:  # no answer from fuser: nothing to wait for
        nonlocal announced
        now_held = run.succeeds(step, step.argv, timeout=30)
        if now_held and not announced:
            run.say("waiting for background system updates to finish (the package lock)")
            announced = True
        return now_held

    if not poll.until(held, step.timeout, LOCK_POLL_S, done=lambda h: not h, sleep=run.sleep).done:
        run.warn(f"the package lock is still held after {step.timeout:g}s; trying anyway")


def _modules(run: Runner, step: Step) -> None:
    if _run(run, step, step.argv):
        return
    extra = tuple(step.content.split())
    if extra and _run(run, Step(extra, "kernel-modules-extra", optional=True), extra):
        _run(run, step, step.argv)


def _wait_docker(run: Runner, step: Step, plan: RuntimePlan) -> None:
    granted = bool(plan.grant_user) and not step.root

    def answers() -> str:
        if _answers(run, step):
            return "directly"
        if granted and _answers_in_group(run, step):
            return "in the group"
        return ""

    polled = poll.until(answers, step.timeout, POLL_S, sleep=run.sleep)
    if polled.last == "directly":
        run.done.append("Docker answers")
    elif polled.last == "in the group":
        # The group was granted in this run: docker and k3d run under it from now on.
        proc.run_in_group(("docker", "k3d"), DOCKER_GROUP)
        run.done.append(f"Docker answers (through the {DOCKER_GROUP} group, without a new login)")
    else:
        _daemon_failure(run, step, plan)


def _answers(run: Runner, step: Step) -> bool:
    return run.succeeds(step, step.argv, timeout=30)


def _answers_in_group(run: Runner, step: Step) -> bool:
    sg = toolpath.find_on_path("sg", run.env, "linux")
    docker = toolpath.find_on_path("docker", run.env, "linux")
    if sg is None or docker is None:
        return False
    import shlex

    result = call.answer(
        sg,
        [DOCKER_GROUP, "-c", "exec " + shlex.join([docker.path, *step.argv[1:]])],
        timeout=30,
        env=run.env,
        redactor=run.redactor,
    )
    return not isinstance(result, NoAnswer) and result.rc == 0


def _daemon_failure(run: Runner, step: Step, plan: RuntimePlan) -> None:
    """A daemon that will not start is Docker's problem, shown with
    Docker's own words; a running one this user cannot reach is the group."""
    if sys.platform == "darwin":
        raise RuntimeFailed(
            f"Docker did not answer within {step.timeout:g}s (it may still be starting)",
            "look for the whale icon in the menu bar; once Docker "
            "Desktop says it is running (colima: `colima status`), run the "
            "installer again",
        )
    probe = Step(("systemctl", "is-active", "--quiet", "docker"), "is the daemon active")
    active = run.succeeds(probe, probe.argv, timeout=30)
    if not active:
        status = Step(("systemctl", "status", "docker.service", "--no-pager", "-l"), "status")
        result = run.answer(status, status.argv, timeout=30)
        tail = (
            ""
            if isinstance(result, NoAnswer)
            else "\n".join(run.redactor(result.stdout).strip().splitlines()[-6:])
        )
        if tail:
            run.warn(
                "Docker's own words:\n" + "\n".join("    " + line for line in tail.splitlines())
            )
        raise RuntimeFailed(
            "Docker is installed, but its daemon won't start: this is a Docker/host problem, "
            "not tracebloc's",
            "if its error mentions 'addrtype' or a missing kernel module, install the netfilter "
            "modules (sudo dnf install -y kernel-modules-extra) and reboot; otherwise check "
            "SELinux, the storage driver and free disk under /var/lib/docker; start Docker "
            "(sudo systemctl start docker), then run again",
        )
    raise RuntimeFailed(
        f"Docker runs, but did not answer {'as root' if step.root else 'you'} "
        f"within {step.timeout:g}s",
        "log out and back in (the docker group), then run the installer again",
    )


def _same_as(run: Runner, step: Step, staged: str, dest: str) -> bool:
    """True when root's `dest` already holds these bytes (then nothing is rewritten and a
    running daemon is not bounced); a streamed step's content is compared on stdin."""
    streamed = staged == STDIN
    probe = Step(("cmp", "-s", "-" if streamed else staged, dest), "compare", root=step.root)
    result = run.answer(
        probe, probe.argv, timeout=30, data=step.content.encode() if streamed else None
    )
    return not isinstance(result, NoAnswer) and result.rc == 0


def _member(run: Runner, step: Step) -> None:
    """A grant read back: `id -nG -- USER` lists the group, or the run fails; nothing says
    the user was granted before this passed."""
    user, group = step.argv[-1], step.content
    text = shown(step, run.as_root)
    run.say(f"{step.why}: {text}")
    result = run.answer(step, step.argv)
    groups = [] if isinstance(result, NoAnswer) or result.rc != 0 else result.stdout.split()
    if group not in groups:
        said = (
            result.reason
            if isinstance(result, NoAnswer)
            else f"it lists {' '.join(groups) or 'nothing'}"
            if result.rc == 0
            else childio.last_line(run.redactor(result.stderr), result.rc)
        )
        raise RuntimeFailed(
            f"{user} is not in the {group} group after usermod (`{text}`: {said})",
            f"add them by hand (sudo usermod -aG {group} -- {user}), check with "
            f"`id -nG {user}`, then run again",
        )
    run.done.append(granted_line(user))
