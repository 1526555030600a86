"""This machine's NVIDIA GPU as Docker sees it (reads only), and carrying out the GPU steps
of decide/gpuhost.py after the one question: each through the runtime's executor
(edges/runtime.py), with the few that depend on what the machine says at that moment
decided here: Docker's default runtime is read again before it is set, Docker is restarted
only when it changed, the driver's reboot hand-off, and the Docker-level GPU check."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextlib import nullcontext

from installer.decide import gpuhost as gh
from installer.decide.drift import DockerRead
from installer.decide.errors import InstallerError, ToolNotFound
from installer.decide.model import Gpu
from installer.decide.redact import Redactor
from installer.decide.runtime import RuntimePlan, Step
from installer.decide.winhost import REBOOT_EXIT
from installer.edges import call, childio, docker, toolpath
from installer.edges.gpu import detect_gpu
from installer.edges.runtime import Runner, execute

PROC_VERSION = "/proc/version"


class GpuRebootPending(InstallerError):
    """The driver is installed and loads only after a reboot: run the installer again then."""

    exit_code = REBOOT_EXIT


def _read_ok(name: str, args: list[str], env: Mapping[str, str], timeout: float) -> str | None:
    """stdout of a read that exited 0; None when the tool is missing or failed."""
    tool = toolpath.find_on_path(name, env, "linux")
    if tool is None:
        return None
    result = call.answer(tool, args, timeout=timeout, env=env)
    if isinstance(result, call.NoAnswer) or result.rc != 0:
        return None
    return result.stdout


def read_facts(
    env: Mapping[str, str],
    info: DockerRead,
    *,
    timeout: float,
    gpu: Gpu | None = None,
    proc_version: str = PROC_VERSION,
) -> gh.GpuFacts:
    """nvidia-smi first (a driver that lists the GPU; `gpu`: what it said moments ago);
    without it, lspci naming NVIDIA (the scripts' "GPU without its driver"); then nvidia-ctk
    and Docker's default runtime."""
    seen = gpu if gpu is not None else detect_gpu(env, "linux", timeout=timeout)
    driver = seen.vendor == "nvidia"
    hardware = driver
    if not driver:
        listed = _read_ok("lspci", [], env, timeout)
        hardware = listed is not None and "nvidia" in listed.lower()
    if not hardware:
        return gh.GpuFacts(False)
    wsl = wsl_kernel(proc_version)
    default = info.default_runtime if info.state == "running" else None
    # Docker already defaulting to the NVIDIA runtime has the toolkit (an older one may lack
    # nvidia-ctk); otherwise nvidia-ctk is what sets that default.
    toolkit = (default == "nvidia" and info.nvidia) or _read_ok(
        "nvidia-ctk", ["--version"], env, timeout
    ) is not None
    return gh.GpuFacts(True, driver=driver, toolkit=toolkit, default_runtime=default, wsl=wsl)


def _default_runtime(env: Mapping[str, str], timeout: float) -> str:
    """What the running daemon defaults to now (the daemon, not daemon.json)."""
    try:
        tool = docker.find_docker(env, "linux")
    except ToolNotFound:
        return ""
    result = call.answer(
        tool, ["info", "--format", "{{.DefaultRuntime}}"], timeout=timeout, env=env
    )
    return "" if isinstance(result, call.NoAnswer) else result.stdout.strip()


def _gpu_container(env: Mapping[str, str], redactor: Redactor, step: Step) -> str:
    """ "" when Docker ran a GPU container that saw the GPU; else why not."""
    try:
        tool = docker.find_docker(env, "linux")
    except ToolNotFound as exc:
        return exc.message
    result = call.answer(
        tool, list(step.argv[1:]), timeout=step.timeout, env=env, redactor=redactor
    )
    if isinstance(result, call.NoAnswer):
        return result.reason
    if result.rc == 0 and any(m in result.stdout for m in ("NVIDIA-SMI", "Driver Version")):
        return ""
    return childio.last_line(redactor(result.stderr or result.stdout), result.rc)


def carry_out(
    plan: RuntimePlan,
    env: Mapping[str, str],
    redactor: Redactor,
    say: Callable[[str], None],
    warn: Callable[[str], None],
    *,
    timeout: float,
) -> gh.Checked:
    """Every GPU step in order; raises at the first required one that fails, and
    GpuRebootPending when the driver needs a reboot. Returns what the GPU check saw."""
    from installer.edges.sudo_keepalive import keepalive

    primes = any(s.kind == "prime" for s in plan.steps)
    kept = keepalive(env) if primes and not plan.as_root else nullcontext()
    runner = Runner(env, redactor, plan.as_root, say=say, warn=warn)
    changed = False
    checked = gh.Checked(ran=False)
    with kept:
        for step in plan.steps:
            if step.kind == gh.DEFAULT_RUNTIME:
                now = _default_runtime(env, timeout)
                if now == "nvidia":
                    say(
                        "Docker already defaults to the NVIDIA runtime: not reconfigured, "
                        "not restarted"
                    )
                    continue
                changed = True
                step = dataclasses.replace(step, kind="run")
            elif step.kind in (gh.RESTART, "wait-docker"):
                if not changed:
                    continue
                step = dataclasses.replace(step, kind="run") if step.kind == gh.RESTART else step
            elif step.kind == gh.REBOOT:
                if detect_gpu(env, "linux", timeout=step.timeout).vendor == "nvidia":
                    say("the NVIDIA driver answers: no reboot needed")
                    continue
                raise GpuRebootPending(
                    "the NVIDIA driver is installed and loads after a restart of this machine",
                    "restart this machine (sudo reboot), then run the installer again: it goes "
                    "on from here (the driver steps are not repeated)",
                )
            elif step.kind == gh.CHECK:
                say(f"{step.why}: {' '.join(step.argv)}")
                failed = _gpu_container(env, redactor, step)
                checked = gh.Checked(ran=True, failed=failed)
                if failed:
                    warn(
                        f"Docker could not give a container the GPU ({failed}); the local "
                        "cluster is created for CPU"
                    )
                continue
            execute(dataclasses.replace(plan, steps=(step,)), runner)
    return checked


def wsl_kernel(proc_version: str = PROC_VERSION) -> bool:
    """A WSL2 kernel (its version names Microsoft): the GPU is the Windows driver's."""
    try:
        with open(proc_version, encoding="utf-8", errors="replace") as handle:
            return "microsoft" in handle.read(4096).lower()
    except OSError:
        return False
