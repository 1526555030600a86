"""Command line: options → the command's module → exit code.

Exit codes: 0 answered, 1 failed (or the cluster cannot be reached), 2 bad input, 3 refused
to protect what is installed, 128 + the signal when stopped (130 Ctrl-C). With `--json`
every outcome is one JSON object on stdout (present/exits.py for the failures). Subcommands
are rows of `COMMANDS`; options without a subcommand mean `install`.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from installer.decide import printable
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.edges import lifetime
from installer.present import options as surface
from installer.present import output
from installer.present.console import is_terminal, owns_console, pause
from installer.present.exits import declined, failed, stopped, within

if TYPE_CHECKING:
    from installer.commands.settings import Settings

# Commands import lazily: `--version` and `--help` stay instant in the frozen binary.

log = logging.getLogger("installer")
DEFAULT_COMMAND = "install"  # what a bare run (a double-click, `curl … | sh`) does


def build_parser() -> surface.Parser:
    parser = surface.Parser(
        prog=surface.PROG,
        description="Install the tracebloc client and its Kubernetes release; options given\n"
        "without a command mean `install`.",
        epilog=surface.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=surface.Parser)
    commands.required = True
    for command in COMMANDS:
        sub = commands.add_parser(
            command.name, help=command.help, description=command.help, epilog=surface.SUB_EPILOG
        )
        surface.common(sub, command.cluster)
        command.options(sub)
        parser.commands[command.name] = sub
    return parser


def with_default_command(argv: Sequence[str]) -> list[str]:
    """`tracebloc-installer --yes` is `install --yes`; `-V`/`--version` is `version`; global
    options before the command move after it (`-n team-a status` is `status -n team-a`).
    A word that names no command is refused here, with the closest one."""
    argv = list(argv)
    if not argv:
        return [DEFAULT_COMMAND]
    if argv[0] in ("-V", "--version"):
        return ["version", *argv[1:]]
    lead, rest = surface.hoisted(argv)
    if not rest or rest[0] == "--":
        return [DEFAULT_COMMAND, *lead, *rest]
    if rest[0] in ("-h", "--help"):
        return [DEFAULT_COMMAND, *lead, *rest] if lead else rest
    if rest[0].startswith("-"):
        return [DEFAULT_COMMAND, *lead, *rest]
    names = [c.name for c in COMMANDS]
    if rest[0] not in names:
        raise BadInput(
            f"unknown command {rest[0]!r}{surface.suggestion(rest[0], names)} "
            f"(see {surface.PROG} --help)",
            "",
        )
    return [rest[0], *lead, *rest[1:]]


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    try:
        lifetime.note_interrupts()
        output.tolerant_console()
        argv = list(sys.argv[1:] if argv is None else argv)
        bare = not argv
        frozen = bool(getattr(sys, "frozen", False))
        code = _main(argv, dict(os.environ if env is None else env))
        if bare and owns_console(os_name(sys.platform), frozen) and _stdin_is_terminal():
            pause()
        return code
    except KeyboardInterrupt:
        # Ctrl-C outside a command: an exit code, never a traceback or a death by signal.
        return 130


def _stdin_is_terminal() -> bool:
    return is_terminal(sys.stdin)


def _main(argv: list[str], env: dict[str, str]) -> int:
    as_json = surface.wants_json(argv)  # known before parsing: a bad flag answers in JSON too
    redactor = Redactor()
    from installer.decide.old_settings import notices, translate_argv

    # The scripts' flags mean what they meant, or stop here naming what replaced them.
    old = translate_argv(argv)
    if old.refused:
        return failed(as_json, 2, old.refused, "")
    env.update(old.env)
    for note in old.notes + notices(env):
        output.stderr(f"note: {printable.shown(note)}\n")
    command = ""
    try:
        argv = with_default_command(old.argv)
        command = argv[0] if argv else ""
        args = build_parser().parse_args(argv)  # --help exits here, before any import
        args.json = args.json or args.output == "json"
        args.from_flags = old.given_by  # HOST_DATA_DIR ← --data-dir: errors name the flag
        from installer.config import env_secrets
        from installer.edges.frozen import prepare_children

        prepare_children()
        redactor.add(*env_secrets(env))
        output.configure_logging(getattr(args, "verbose", False), redactor)
        runner = next(c.run for c in COMMANDS if c.name == args.command)
        return runner(args, env, redactor)
    except InstallerError as exc:
        if getattr(exc, "declined", False):  # a no at the question is an answer, not an error
            return declined(as_json, exc.exit_code, redactor(exc.message))
        data = output.redact_all(
            getattr(exc, "data", None) or {}, redactor
        )  # e.g. the network report
        return failed(as_json, exc.exit_code, redactor(exc.message), redactor(exc.remedy), data)
    except KeyboardInterrupt as exc:
        # The running child was already stopped (by proc, or probe.concurrently for threads).
        signum = exc.signum if isinstance(exc, lifetime.Terminated) else None
        return stopped(as_json, command, signum, getattr(exc, "remedy", ""))
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks
        # Raised on the way out of an earlier interruption: it is that interruption.
        stop = within(exc)
        signum = (
            lifetime.stopped_by()
            if stop is None
            else (stop.signum if isinstance(stop, lifetime.Terminated) else signal.SIGINT)
        )
        if signum is not None:
            log.debug("after the interruption", exc_info=True)
            return stopped(
                as_json,
                command,
                None if signum == signal.SIGINT else signum,
                getattr(stop, "remedy", ""),
            )
        log.debug("internal error", exc_info=True)
        return failed(
            as_json,
            1,
            f"internal error: {redactor(repr(exc))}",
            "please report this; run again with --verbose for details",
        )


# --- the commands ------------------------------------------------------------------------


def _settings(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> Settings:
    """The one call that reads the environment: every setting the command uses, validated
    (exit 2 naming the variable or flag), the same way for `plan` and `install`."""
    from installer.commands.settings import build

    return build(args, env, redactor, from_flags=getattr(args, "from_flags", None))


def run_version(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.buildinfo import build_info, version_line

    info = build_info()
    if not output.emit(args.json, dict(info), version_line(info), redactor):
        return 1
    return 0


def run_probe(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.probe import gather
    from installer.present import report

    facts = gather(_settings(args, env, redactor).probe, env, redactor)
    return (
        0
        if output.emit(args.json, report.probe_json(facts), report.probe_text(facts), redactor)
        else 1
    )


def run_plan(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands import plan as plan_command

    settings = _settings(args, env, redactor)
    assert settings.plan is not None and settings.install is not None  # built for plan
    return plan_command.run_plan(args, settings.plan, settings.install, env, redactor)


def run_tools(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.tools import run_command

    return run_command(args, env, redactor)


def run_install(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.install_command import run_install as run

    return run(args, env, redactor)


def run_status(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.status import gather_status
    from installer.present.health import status_json, status_text

    status = gather_status(_settings(args, env, redactor).probe, env, redactor)
    output.emit(args.json, status_json(status), status_text(status), redactor)
    return 0 if status.healthy else 1


def run_diagnose(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.diagnose import collect, plan_config_or_reason

    built = _settings(args, env, redactor)
    assert built.paths is not None
    probe_cfg = built.probe
    plan_cfg, reason = plan_config_or_reason(env, probe_cfg)
    if plan_cfg is not None:
        redactor.add(*plan_cfg.secrets)
    sys.stderr.write("collecting diagnostics (secrets are masked before anything is written) ...\n")
    written = collect(probe_cfg, plan_cfg, reason, env, redactor, data_dir=built.paths.data_dir)
    text = f"support bundle written: {written.path}"
    text += "".join(f"\n  note: {note}" for note in written.notes)
    output.emit(
        args.json,
        {"bundle": written.path, "files": list(written.files), "notes": list(written.notes)},
        text,
        redactor,
    )
    return 0


def run_uninstall(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands import uninstall, uninstall_flow

    options = uninstall.Options(args.delete_data, args.delete_cluster)
    built = _settings(args, env, redactor)
    assert built.paths is not None
    cfg = uninstall.pinned(built.probe, env, options)
    tools = uninstall.find(env, redactor, options)
    where = built.paths.data_dir
    with uninstall.locked(env, where, cfg, options):
        return uninstall_flow.confirm_and_remove(
            args, cfg, tools, uninstall.survey(cfg, tools, where, options), options, redactor
        )


def run_help(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    """`help` and `help COMMAND`: the same text as `--help` and `COMMAND --help`."""
    parser = build_parser()
    if args.topic is None:
        parser.print_help()
        return 0
    sub = parser.commands.get(args.topic)
    if sub is None:
        raise BadInput(
            f"unknown command {args.topic!r}"
            f"{surface.suggestion(args.topic, parser.commands)} "
            f"(see {surface.PROG} --help)",
            "",
        )
    sub.print_help()
    return 0


def completion_words(parser: surface.Parser) -> dict[str, list[str]]:
    """What may follow each command, and ("") what may come first: present/completion.py."""
    names = list(parser.commands)
    words: dict[str, list[str]] = {
        "": [*names, *surface.GLOBAL_VALUED, *surface.GLOBAL_FLAGS, "--help", "--version"]
    }
    for name, sub in parser.commands.items():
        values = {"completion": list(surface.SHELLS), "help": names}.get(name, [])
        words[name] = [*values, *sub.option_words()]
    return words


def run_completion(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.present.completion import script

    return 0 if output.write_stdout(script(args.shell, completion_words(build_parser()))) else 1


def _run_prepare_host(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.prepare import run_prepare_host

    return run_prepare_host(args, env, redactor)


COMMANDS: list[surface.Command] = [
    surface.Command(
        "install",
        "install or upgrade the client (what a bare run does)",
        run_install,
        surface.install_options,
    ),
    surface.Command(
        "plan",
        "what install would do, with every command; changes nothing",
        run_plan,
        surface.plan_options,
    ),
    surface.Command("probe", "read the machine and cluster; change nothing", run_probe),
    surface.Command(
        "version", "print the version, build commit and date", run_version, cluster=False
    ),
    surface.Command(
        "tools",
        "where kubectl, helm and k3d come from; --download-to fills a mirror",
        run_tools,
        surface.tools_options,
    ),
    surface.Command("status", "is the client healthy? exit 0 when it is, 1 when not", run_status),
    surface.Command(
        "diagnose", "write one support bundle (secrets masked) and print its path", run_diagnose
    ),
    surface.Command(
        "uninstall",
        "remove the client's release (its data too: --delete-data)",
        run_uninstall,
        surface.uninstall_options,
    ),
    surface.Command(
        "prepare-host",
        "administrators: install and start Docker, grant TB_PREPARE_USER the docker group",
        _run_prepare_host,
        surface.prepare_host_options,
        cluster=False,
    ),
    surface.Command(
        "completion",
        "print a completion script: bash, zsh, fish or powershell",
        run_completion,
        surface.completion_options,
        cluster=False,
    ),
    surface.Command(
        "help",
        "show the help of a command (help install)",
        run_help,
        surface.help_options,
        cluster=False,
    ),
]
