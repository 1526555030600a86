"""Command line: options → configuration → pipeline → output and exit code.

The only module that prints outcomes or chooses exit codes: 0 answered, 1 failed (or the
cluster cannot be reached), 2 bad input, 3 refused to protect what is installed, 128 + the
signal when stopped (130 Ctrl-C). With `--json` every outcome is one JSON object on stdout.
Subcommands are rows of `COMMANDS`; options without a subcommand mean `install`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from installer import __version__
from installer.decide import printable
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.edges import lifetime
from installer.present import options as surface
from installer.present import output
from installer.present.console import is_terminal, owns_console, pause

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
        return _failed(as_json, 2, old.refused, "")
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
            return _declined(as_json, exc.exit_code, redactor(exc.message))
        data = output.redact_all(
            getattr(exc, "data", None) or {}, redactor
        )  # e.g. the network report
        return _failed(as_json, exc.exit_code, redactor(exc.message), redactor(exc.remedy), data)
    except KeyboardInterrupt as exc:
        # The running child was already stopped (by proc, or probe.concurrently for threads).
        signum = exc.signum if isinstance(exc, lifetime.Terminated) else None
        return _stopped(as_json, command, signum, getattr(exc, "remedy", ""))
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks
        # Raised on the way out of an earlier interruption: it is that interruption.
        stop = _interruption(exc)
        signum = (
            lifetime.stopped_by()
            if stop is None
            else (stop.signum if isinstance(stop, lifetime.Terminated) else signal.SIGINT)
        )
        if signum is not None:
            log.debug("after the interruption", exc_info=True)
            return _stopped(
                as_json,
                command,
                None if signum == signal.SIGINT else signum,
                getattr(stop, "remedy", ""),
            )
        log.debug("internal error", exc_info=True)
        return _failed(
            as_json,
            1,
            f"internal error: {redactor(repr(exc))}",
            "please report this; run again with --verbose for details",
        )


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt (or Terminated) `exc` was raised while handling, if any."""
    seen: set[int] = set()
    link = exc.__cause__ or exc.__context__
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def _stopped(as_json: bool, command: str, signum: int | None, said: str) -> int:
    """Ctrl-C (signum None) or SIGTERM/SIGHUP: the shell's convention, 128 + the signal."""
    word, code = ("interrupted", 130) if signum is None else ("terminated", 128 + signum)
    return _failed(as_json, code, word, said or (RESUME if command == "install" else ""))


def _failed(
    as_json: bool, code: int, message: str, remedy: str, data: dict[str, Any] | None = None
) -> int:
    output.fail(message, remedy)
    if as_json:
        document: dict[str, Any] = {"ok": False, "exit": code, "reason": message}
        if remedy:
            document["remedy"] = remedy
        document.update(data or {})
        output.write_stdout(json.dumps(document, indent=2) + "\n")
    return code


def _declined(as_json: bool, code: int, detail: str) -> int:
    output.stderr(f"Nothing was changed. {printable.shown(detail)}\n")
    if as_json:
        output.write_stdout(
            json.dumps(
                {
                    "ok": False,
                    "exit": code,
                    "declined": True,
                    "reason": "Nothing was changed. " + detail,
                },
                indent=2,
            )
            + "\n"
        )
    return code


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


RESUME = (
    "the values file is intact; run tracebloc-installer again to resume "
    "(it recovers a half-finished helm release first)"
)


def run_install(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.install import install
    from installer.decide.localcluster import release_dirs
    from installer.edges.hostdirs import check_files, check_writable
    from installer.present.summary import install_json, summary
    from installer.present.ui import Ui

    built = _settings(args, env, redactor)  # refuses a sudo-wrapped install first
    assert built.plan is not None and built.install is not None and built.paths is not None
    cfg, settings = built.plan, built.install
    # Before the log opens and before anything else: the data directory must take files.
    check_writable(cfg.host_data_dir, env, os_name(sys.platform), built.paths.data_dir_source)
    check_files(
        cfg.values_path,
        [os.path.join(cfg.host_data_dir, cfg.probe.release)]
        + [
            path
            for path, _ in release_dirs(
                cfg.host_data_dir,
                cfg.host_dataset_dir,
                cfg.probe.release,
                windows=os_name(sys.platform) == "windows",
            )
        ],
    )
    lifetime.stop_cleanly_on_termination()
    # The spinner only when a person watches both streams, and not under --verbose.
    watched = not args.verbose and is_terminal(sys.stdout) and is_terminal(sys.stderr)
    ui = Ui(sys.stderr, env=env, redactor=redactor, is_tty=watched)
    log_path = built.paths.log_file
    handler = output.log_to_file(log_path, redactor, ui)
    log.info(
        "tracebloc-installer %s: install (%s)",
        __version__,
        "non-interactive" if args.yes else "interactive",
    )
    try:
        outcome = install(cfg, env, redactor, ui, interactive=not args.yes, settings=settings)
    except InstallerError as exc:
        log.info("install failed: %s", exc.message)
        if handler is not None:
            exc.remedy = (exc.remedy + "\n" if exc.remedy else "") + f"log file: {log_path}"
        raise
    except KeyboardInterrupt:
        log.info("install interrupted")
        raise
    finally:
        if handler is not None:
            logging.getLogger("installer").removeHandler(handler)
            handler.close()
    shown_log = log_path if handler is not None else None
    document = {"ok": True, "exit": 0, **install_json(outcome, shown_log)}
    status, ingest = _next_commands(args, env, outcome.namespace)
    # A person at a terminal reads the few lines; --verbose and a pipe print everything.
    full = args.verbose or not is_terminal(sys.stdout)
    if not full:
        log.info("summary:\n%s", summary(outcome, shown_log, status=status, ingest=ingest))
    text = summary(
        outcome,
        shown_log,
        full=full,
        status=status,
        ingest=ingest,
        width=ui.columns(),
        home=os.path.expanduser("~"),
    )
    # The install is done whatever happens to stdout: its exit code says so.
    output.emit(args.json, document, text, redactor)
    return 0


def _next_commands(
    args: argparse.Namespace, env: Mapping[str, str], namespace: str
) -> tuple[str, bool]:
    """`status` as it can be pasted here (this program by the name it answers to on PATH,
    else by its path; the cluster and namespace of this run), and whether `tracebloc data
    ingest` can run as printed (the tracebloc CLI on PATH)."""
    import shutil

    from installer.decide import shellquote

    path = env.get("PATH", os.defpath)
    if shutil.which(surface.PROG, path=path):
        program = [surface.PROG]
    elif getattr(sys, "frozen", False):
        program = [sys.executable]
    else:
        program = [sys.executable, "-m", "installer"]
    flags = ["--kubeconfig", args.kubeconfig] if getattr(args, "kubeconfig", None) else []
    flags += ["--context", args.context] if getattr(args, "context", None) else []
    flags += ["-n", namespace] if namespace != "tracebloc" else []
    # On PATH, as printed; never run to find out (a run that did not sign in runs no CLI).
    ingest = shutil.which("tracebloc", path=path) is not None
    return shellquote.join([*program, "status", *flags]), ingest


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


# --- plumbing ------------------------------------------------------------------------------
