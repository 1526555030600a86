"""The Windows host plan's one elevated child and its resume after a reboot: the engine's own
command lines for both, quoted for PowerShell and for CommandLineToArgvW. Pure."""

from __future__ import annotations

import re

from installer.decide.winhost import HostPlan, Options

# The elevation wrapper's own exit code for a declined UAC prompt (Windows' ERROR_CANCELLED,
# 1223, does not fit the 8 bits a POSIX test can carry).
DECLINED_RC = 223
RESUME_KEY = r"HKCU\Software\Microsoft\Windows\CurrentVersion\RunOnce"
RESUME_VALUE = "TraceblocInstallerResume"

SAFE_FLAGS = ("--no-reboot", "--resume", "--verbose")


def ps_quote(text: str) -> str:
    """A PowerShell single-quoted string, always quoted (a script's literal): nothing expanded."""
    return "'" + text.replace("'", "''").replace("\u2019", "\u2019\u2019") + "'"


def win_quote(arg: str) -> str:
    """One argument as CommandLineToArgvW reads it back (what Start-Process passes on)."""
    if arg and not re.search(r'[\s"]', arg):
        return arg
    out, backslashes = ['"'], 0
    for char in arg:
        if char == "\\":
            backslashes += 1
            continue
        if char == '"':
            out.append("\\" * (2 * backslashes + 1) + '"')
        else:
            out.append("\\" * backslashes + char)
        backslashes = 0
    out.append("\\" * (2 * backslashes) + '"')
    return "".join(out)


def engine_args(command: str, opts: Options, extra: tuple[str, ...] = ()) -> list[str]:
    """The engine's own arguments for a child run of itself: only flags that carry no secret."""
    args = [command]
    if opts.daily_user:
        args += ["--daily-user", opts.daily_user]
    if opts.no_reboot:
        args.append("--no-reboot")
    return args + [a for a in extra if a in SAFE_FLAGS]


def elevate_argv(exe: str, args: list[str]) -> list[str]:  # args: after the executable
    """One UAC prompt: the engine itself, elevated, for the privileged half; waits for it and
    exits with its exit code (a declined prompt makes Start-Process fail: DECLINED_RC)."""
    arg_line = " ".join(win_quote(a) for a in args)
    script = (
        f"try {{ $p = Start-Process -FilePath {ps_quote(exe)} -ArgumentList "
        f"{ps_quote(arg_line)} -Verb RunAs -Wait -PassThru -ErrorAction Stop }} "
        f"catch {{ exit {DECLINED_RC} }}; exit $p.ExitCode"
    )
    return ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command", script]


def resume_command(exe: str, opts: Options, prefix: tuple[str, ...] = ()) -> str:
    return " ".join(win_quote(a) for a in [exe, *prefix, *engine_args("install", opts), "--resume"])


def resume_argv(exe: str, opts: Options, prefix: tuple[str, ...] = ()) -> list[str]:
    return [
        "reg.exe",
        "add",
        RESUME_KEY,
        "/v",
        RESUME_VALUE,
        "/t",
        "REG_SZ",
        "/d",
        resume_command(exe, opts, prefix),
        "/f",
    ]


def unresume_argv() -> list[str]:
    return ["reg.exe", "delete", RESUME_KEY, "/v", RESUME_VALUE, "/f"]


def reboot_words(plan: HostPlan, opts: Options, resume_armed: bool) -> str:
    if opts.no_reboot:
        return (
            "reboot when ready; the install continues at your next sign-in"
            if resume_armed
            else "reboot, then run the installer again to continue"
        )
    return (
        "the install continues at your next sign-in after the reboot"
        if resume_armed
        else "after the reboot, run the installer again to continue"
    )
