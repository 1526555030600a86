"""Windows host preparation, the machine side: one bounded probe, and the calls the plan runs.
Every call is an argv through proc; nothing here decides. The probe reads only what a
standard user may, so the tier is known before anyone is asked for administrator rights.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from installer.decide import elevation
from installer.decide import winhost as wh
from installer.decide.errors import InstallerError, ToolNotFound
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.decide.wslconfig import merge_wslconfig
from installer.edges import call, childio, proc, toolpath

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 30.0
WSL_VERSION_TIMEOUT_S = 20.0  # `wsl --version` hangs on a wedged LxssManager
STEP_TIMEOUTS_S = {
    "feature": 600.0,
    "wsl-update": 300.0,
    "wsl-default": 20.0,
    "docker-desktop": 2400.0,
    "docker-users": 60.0,
}

# Win32_OptionalFeature.InstallState: 1 enabled, 2 disabled, 3 absent (not on this edition).
PROBE_SCRIPT = r"""
$ErrorActionPreference = 'Stop'
$o = [ordered]@{ features = [ordered]@{} }
$id = [Security.Principal.WindowsIdentity]::GetCurrent()
$o.admin = ([Security.Principal.WindowsPrincipal]$id).IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
$o.user = $env:USERNAME
try { $os = Get-CimInstance Win32_OperatingSystem; $o.edition = "$($os.Caption)"; $o.memory_kib = [int64]$os.TotalVisibleMemorySize } catch {}
foreach ($f in 'Microsoft-Windows-Subsystem-Linux','VirtualMachinePlatform','Microsoft-Hyper-V-All') {
  try { $s = Get-CimInstance Win32_OptionalFeature -Filter "Name='$f'"; $o.features[$f] = if ($s) { [int]$s.InstallState } else { 3 } } catch { $o.features[$f] = 0 }
}
try {
  $cs = Get-CimInstance Win32_ComputerSystem
  if ($cs.HypervisorPresent) { $o.virtualization = $true } else {
    $cpu = Get-CimInstance Win32_Processor | Select-Object -First 1
    if ($null -ne $cpu.VirtualizationFirmwareEnabled) { $o.virtualization = [bool]$cpu.VirtualizationFirmwareEnabled }
  }
} catch {}
$o.winget = [bool](Get-Command winget -ErrorAction SilentlyContinue)
try { $o.temp = [IO.Path]::GetTempPath() } catch {}
$o.docker_desktop_exe = Join-Path $env:ProgramFiles 'Docker\Docker\Docker Desktop.exe'
$o.docker_desktop = Test-Path -LiteralPath $o.docker_desktop_exe
if (Get-Command Get-NetTCPConnection -ErrorAction SilentlyContinue) {
  try {
    $c = @(Get-NetTCPConnection -LocalPort 6550 -State Listen -ErrorAction Stop)
    $o.port_busy = $c.Count -gt 0
    if ($c.Count) { $o.port_pid = [int]$c[0].OwningProcess; try { $o.port_process = (Get-Process -Id $o.port_pid).ProcessName } catch {} }
  } catch { if ($_.CategoryInfo.Category -eq 'ObjectNotFound') { $o.port_busy = $false } }
}
try { $o.arch = if ($env:PROCESSOR_ARCHITECTURE -eq 'ARM64') { 'arm64' } else { 'amd64' } } catch {}
$o | ConvertTo-Json -Compress -Depth 4
"""


def powershell(script: str) -> list[str]:
    return [
        "powershell.exe",
        "-NoProfile",
        "-NonInteractive",
        "-ExecutionPolicy",
        "Bypass",
        "-Command",
        script,
    ]


def members_script(group: str) -> str:
    return (
        f"try {{ Get-LocalGroupMember -Group {elevation.ps_quote(group)} -ErrorAction Stop | "
        "ForEach-Object { $_.Name } } catch { if ($_.CategoryInfo.Category -eq "
        "'ObjectNotFound') { exit 3 } else { exit 4 } }"
    )


def system_tool(argv0: str, env: Mapping[str, str]) -> Tool:
    """Windows' own programs (powershell.exe, dism.exe, …), found on PATH only: they are the
    system's, so no TRACEBLOC_<NAME> variable names another one."""
    name = argv0.removesuffix(".exe")
    found = toolpath.find_on_path(name, env, os_name(sys.platform))
    if found is None:
        raise ToolNotFound(name, f"{argv0} is part of Windows and was not found on PATH")
    return found


def system_answer(
    argv: Sequence[str], env: Mapping[str, str], timeout: float, redactor: Redactor | None
) -> proc.Result | call.NoAnswer:
    """`call.answer` for one of Windows' own programs (`system_tool`)."""
    name = argv[0].removesuffix(".exe")
    return call.answer(
        toolpath.find_on_path(name, env, os_name(sys.platform)),
        argv[1:],
        timeout=timeout,
        env=env,
        redactor=redactor,
        missing=ToolNotFound(name).message,
    )


def decode_wsl(out: bytes) -> str:
    """wsl.exe writes UTF-16LE to a pipe; everything else here writes UTF-8."""
    if out.count(b"\x00") > len(out) // 4:
        return out.decode("utf-16-le", errors="replace").replace("\x00", "")
    return childio.decode(out)


def parse_probe(
    out: str,
    *,
    wsl_version: str,
    docker_usable: bool,
    our_cluster_running: bool | None,
    in_docker_users: bool | None,
) -> wh.WinFacts:
    try:
        doc: Any = json.loads(out)
    except ValueError:
        return wh.WinFacts(False, reason="the machine probe printed output that is not JSON")
    if not isinstance(doc, dict):
        return wh.WinFacts(False, reason="the machine probe printed no object")
    states = {1: "Enabled", 2: "Disabled", 3: None}
    raw = doc.get("features")
    raw = raw if isinstance(raw, dict) else {}
    # 0 (or anything else): unreadable, shown as "" so the plan enables it: DISM says when a
    # feature is already on, and a read error never becomes a confident "enabled".
    features = {name: states.get(value, "") for name, value in raw.items()}
    memory = doc.get("memory_kib")
    pid = doc.get("port_pid")
    return wh.WinFacts(
        True,
        admin=doc.get("admin") is True,
        edition=str(doc.get("edition") or ""),
        features=features,
        virtualization=doc.get("virtualization")
        if isinstance(doc.get("virtualization"), bool)
        else None,
        wsl_version=wsl_version,
        winget=doc.get("winget") is True,
        docker_desktop=doc.get("docker_desktop") is True,
        docker_usable=docker_usable,
        docker_desktop_exe=str(
            doc.get("docker_desktop_exe") or wh.WinFacts(True).docker_desktop_exe
        ),
        port_busy=doc.get("port_busy") if isinstance(doc.get("port_busy"), bool) else None,
        port_owner=wh.Listener(pid, str(doc.get("port_process") or ""))
        if isinstance(pid, int)
        else None,
        our_cluster_running=our_cluster_running,
        host_memory_gib=int(memory // 2**20) if isinstance(memory, int) and memory > 0 else None,
        user=wh.bare_user(str(doc.get("user") or "")),
        arch=str(doc.get("arch") or "amd64"),
        in_docker_users=in_docker_users,
        temp_dir=str(doc.get("temp") or ""),
    )


def read_facts(
    env: Mapping[str, str],
    *,
    docker_usable: bool,
    our_cluster_running: bool | None,
    daily_user: str = "",
    redactor: Redactor | None = None,
) -> wh.WinFacts:
    """One bounded read of the machine; a probe that fails is an unreadable fact, never a guess."""
    answer = system_answer(powershell(PROBE_SCRIPT), env, PROBE_TIMEOUT_S, redactor)
    if isinstance(answer, call.NoAnswer):
        return wh.WinFacts(False, reason=answer.reason)
    if answer.rc != 0:
        return wh.WinFacts(False, reason=childio.last_line(answer.stderr, answer.rc))
    version = system_answer(["wsl.exe", "--version"], env, WSL_VERSION_TIMEOUT_S, redactor)
    wsl_version = (
        decode_wsl(version.out) if isinstance(version, proc.Result) and version.rc == 0 else ""
    )
    user = daily_user or wh.bare_user(env.get("USERNAME", ""))
    return parse_probe(
        answer.stdout,
        wsl_version=wsl_version,
        docker_usable=docker_usable,
        our_cluster_running=our_cluster_running,
        in_docker_users=in_group("docker-users", user, env, redactor),
    )


def in_group(
    group: str, user: str, env: Mapping[str, str], redactor: Redactor | None
) -> bool | None:
    """A state query (not a parse of `net localgroup /add`'s localised words): True, False
    (the group does not exist yet: Docker Desktop is not installed), or None (unreadable)."""
    if not user:
        return None
    answer = system_answer(powershell(members_script(group)), env, PROBE_TIMEOUT_S, redactor)
    if isinstance(answer, call.NoAnswer):
        return None
    if answer.rc == 3:
        return False
    if answer.rc != 0:
        return None
    short = wh.bare_user(user).lower()
    return any(wh.bare_user(line).lower() == short for line in answer.stdout.splitlines())


def run_step(
    step: wh.Step, env: Mapping[str, str], redactor: Redactor | None
) -> tuple[str, int | None]:
    """('ok' | 'reboot' | 'failed' | 'not-run', exit code). DISM's 3010 is a success that
    leaves a reboot pending; a step with a fallback runs it once after a real failure."""
    family = step.key.split(":", 1)[0]
    timeout = STEP_TIMEOUTS_S.get(family, 120.0)
    for argv in (step.argv, step.fallback):
        if not argv:
            break
        log.info("host: %s: %s", step.title, " ".join(argv))
        answer = system_answer(list(argv), env, timeout, redactor)
        if isinstance(answer, call.NoAnswer):
            log.warning("host: %s did not run: %s", step.title, answer.reason)
            return "not-run", None
        if answer.rc == 0:
            return "ok", 0
        if family == "feature" and answer.rc == wh.DISM_REBOOT_RC:
            return "reboot", answer.rc
        log.warning(
            "host: %s exited %s: %s",
            step.title,
            answer.rc,
            childio.last_line(answer.stderr or answer.stdout, answer.rc),
        )
    return "failed", answer.rc if isinstance(answer, proc.Result) else None


def write_wslconfig(profile: str, gib: int) -> str:
    """What was done to `<profile>\\.wslconfig`, in words. A link or a non-file is left alone."""
    from installer.edges.valuesfile import read_regular

    path = os.path.join(profile, ".wslconfig")
    if os.path.islink(path):
        return f"left {path} alone: it is a symbolic link"
    try:
        existing = (read_regular(path) or b"").decode("utf-8", errors="replace")
    except InstallerError as exc:
        return f"left {path} alone: {exc.message}"
    merged = merge_wslconfig(existing, gib)
    if merged is None:
        return f"kept the memory already set in {path}"
    temporary = path + ".tracebloc-tmp"
    with open(temporary, "w", encoding="ascii", newline="") as handle:
        handle.write(merged)
    os.replace(temporary, path)
    return f"set memory={gib}GB in {path} (applies when WSL next starts)"


def profile_of(user: str, env: Mapping[str, str]) -> str:
    """The profile directory of `user`: this account's USERPROFILE, else
    <SystemDrive>\\Users\\<user> when it exists; "" when they never signed in."""
    if not user or user.lower() == wh.bare_user(env.get("USERNAME", "")).lower():
        return env.get("USERPROFILE", "")
    candidate = os.path.join(env.get("SystemDrive", "C:") + os.sep, "Users", user)
    return candidate if os.path.isdir(candidate) and not os.path.islink(candidate) else ""


def startup_shortcut_argv(profile: str, exe: str) -> list[str]:
    """A Startup-folder shortcut in another account's profile (its HKCU is not loaded)."""
    folder = os.path.join(
        profile, "AppData", "Roaming", "Microsoft", "Windows", "Start Menu", "Programs", "Startup"
    )
    script = (
        f"$d = {elevation.ps_quote(folder)}; New-Item -ItemType Directory -Force -Path $d | Out-Null; "
        "$w = New-Object -ComObject WScript.Shell; "
        "$s = $w.CreateShortcut((Join-Path $d 'Docker Desktop.lnk')); "
        f"$s.TargetPath = {elevation.ps_quote(exe)}; $s.Save()"
    )
    return powershell(script)


def reboot_argv() -> list[str]:
    return ["shutdown.exe", "/r", "/t", "0"]
