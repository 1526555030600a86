"""Command line: options → configuration → pipeline → output and exit code.

The only module that prints outcomes or chooses exit codes: 0 answered, 1 failed,
2 bad input, 3 refused, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM; 129 for SIGHUP).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from installer import __version__
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import os_name
from installer.present.console import is_terminal, owns_console, pause
from installer.present.redact import RedactingFilter, Redactor

if TYPE_CHECKING:
    from installer.config import ProbeConfig
    from installer.present.ui import Ui

# Each command imports what it needs when it runs: `--version` and `--help` stay instant in
# the frozen binary, which unpacks every module it imports.

log = logging.getLogger("installer")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracebloc-installer",
        description="Install the tracebloc client: probe, size, render and apply its Helm release.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    common.add_argument("--namespace", "-n", help="namespace and release name (default: "
                        "TB_NAMESPACE, else tracebloc)")  # fmt: skip
    common.add_argument("--kubeconfig", help="kubeconfig file for kubectl and helm")
    common.add_argument("--context", help="kubeconfig context for kubectl and helm")
    common.add_argument("--verbose", "-v", action="store_true", help="log each tool call to stderr")

    commands.add_parser(
        "probe", parents=[common], help="read the machine and cluster; change nothing"
    )
    plan = commands.add_parser(
        "plan", parents=[common],
        help="show the values file and helm command an install would use; change nothing")  # fmt: skip
    plan.add_argument("--values-out", metavar="PATH", help="also write the values file here")
    plan.add_argument("--chart", metavar="REF", help="chart reference or directory")
    install = commands.add_parser(
        "install", parents=[common],
        help="install or upgrade the client (the default: what a bare run does)")  # fmt: skip
    install.add_argument("--yes", "--non-interactive", "-y", dest="yes", action="store_true",
                         help="never prompt (automation): missing input is an error")  # fmt: skip
    install.add_argument("--chart", metavar="REF", help="chart reference or directory")
    commands.add_parser(
        "status", parents=[common],
        help="is the client healthy? exit 0 when it is, 1 when not; change nothing")  # fmt: skip
    commands.add_parser(
        "diagnose", parents=[common],
        help="write one support bundle (secrets masked) and print its path")  # fmt: skip
    uninstall = commands.add_parser(
        "uninstall", parents=[common],
        help="remove the client's release; keeps its data unless --delete-data")  # fmt: skip
    uninstall.add_argument("--yes", "-y", action="store_true",
                           help="do not ask: confirms everything asked for")  # fmt: skip
    uninstall.add_argument("--delete-data", action="store_true",
                           help="also delete the release's volume claims and the data directory")  # fmt: skip
    uninstall.add_argument("--delete-cluster", action="store_true",
                           help="also delete the local k3d cluster, if tracebloc-installer created it")  # fmt: skip
    tools = commands.add_parser(
        "tools", parents=[common],
        help="show where kubectl, helm and k3d come from; --download-to fills a mirror")  # fmt: skip
    tools.add_argument("--download-to", metavar="DIR",
                       help="download the pinned tools, verified, into DIR "
                            "(for TRACEBLOC_TOOLS_MIRROR on a machine without internet)")  # fmt: skip
    tools.add_argument("--platform", action="append", metavar="OS-ARCH",
                       help="with --download-to: linux-x86_64, linux-arm64, darwin-x86_64, "
                            "darwin-arm64, windows-x86_64 or all (default: this machine's; "
                            "repeatable)")  # fmt: skip
    return parser


DEFAULT_COMMAND = "install"  # what a bare run (a double-click, `curl … | sh`) does


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    _tolerant_console()
    argv = list(sys.argv[1:] if argv is None else argv)
    bare = not argv
    frozen = bool(getattr(sys, "frozen", False))
    code = _main(argv or [DEFAULT_COMMAND], dict(os.environ if env is None else env))
    if bare and owns_console(os_name(sys.platform), frozen) and _stdin_is_terminal():
        pause()
    return code


def _stdin_is_terminal() -> bool:
    return is_terminal(sys.stdin)


def _main(argv: list[str], env: dict[str, str]) -> int:
    from installer.decide.variables import notices, translate_argv

    # The twins' flags mean what they meant, or stop here naming what replaced them.
    old = translate_argv(argv)
    if old.refused:
        _fail(old.refused, "")
        return 2
    env.update(old.env)
    for note in old.notes + notices(env):
        sys.stderr.write(f"note: {note}\n")
    args = build_parser().parse_args(old.argv or [DEFAULT_COMMAND])  # --version, --help exit here
    from installer.config import env_secrets
    from installer.edges.frozen import prepare_children

    prepare_children()
    redactor = Redactor(env_secrets(env))
    _configure_logging(args.verbose, redactor)
    try:
        if args.command == "probe":
            return run_probe(args, env, redactor)
        if args.command == "install":
            return run_install(args, env, redactor)
        if args.command in ("status", "diagnose", "uninstall"):
            return {"status": run_status, "diagnose": run_diagnose,
                    "uninstall": run_uninstall}[args.command](args, env, redactor)  # fmt: skip
        if args.command == "tools":
            return run_tools(args, env, redactor)
        return run_plan(args, env, redactor)
    except InstallerError as exc:
        _fail(redactor(exc.message), redactor(exc.remedy))
        return exc.exit_code
    except KeyboardInterrupt as exc:
        # The child that was running has already been stopped by proc (asked first, for
        # helm) or by probe.concurrently for reads in worker threads. An interrupt that
        # knows what it left behind (the readiness wait) says so itself.
        said = getattr(exc, "remedy", "")
        _fail("terminated" if isinstance(exc, Terminated) else "interrupted",
              said or (RESUME if args.command == "install" else ""))  # fmt: skip
        # The shell's convention, which the twins kept: 128 + the signal's number.
        return 128 + exc.signum if isinstance(exc, Terminated) else 130
    except BrokenPipeError:
        # stdout went away (`| head`): nothing left to tell anyone.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks
        log.debug("internal error", exc_info=True)
        _fail(f"internal error: {redactor(repr(exc))}",
              "please report this; run again with --verbose for details")  # fmt: skip
        return 1


def _probe_config(args: argparse.Namespace, env: dict[str, str]) -> ProbeConfig:
    from installer.config import probe_config

    kubeconfig = os.path.expanduser(args.kubeconfig) if args.kubeconfig else None
    if kubeconfig and not os.path.isfile(kubeconfig):
        raise BadInput(f"--kubeconfig {args.kubeconfig!r} is not a file")
    return probe_config(env, namespace=args.namespace, kubeconfig=kubeconfig,
                        context=args.context)  # fmt: skip


def run_probe(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.probe import gather
    from installer.present import report

    cfg = _probe_config(args, env)
    facts = gather(cfg, env, redactor)
    _emit(args.json, report.probe_json(facts), report.probe_text(facts), redactor)
    return 0


def run_plan(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.plan import check_paths, make_plan
    from installer.config import plan_config
    from installer.edges.valuesfile import write_values
    from installer.present import report

    probe_cfg = _probe_config(args, env)
    cfg = plan_config(env, probe_cfg, os_=os_name(sys.platform), chart=args.chart)
    redactor.add(*cfg.secrets)
    check_paths(cfg, env, args.chart)
    if args.values_out and cfg.values_given:
        raise BadInput("--values-out cannot be used with TRACEBLOC_VALUES_FILE: "
                       "install would write no values file")  # fmt: skip
    from installer.commands.localcluster import survey
    from installer.edges.machine import read_machine

    local = survey(cfg, env, redactor, read_machine(env), os_name(sys.platform))
    plan = make_plan(cfg, env, redactor, local=local)
    written = None
    if args.values_out and plan.data is not None:
        written = write_values(args.values_out, plan.data, env=env, os_=plan.facts.machine.os)
    document = report.plan_json(plan)
    text = report.plan_text(plan)
    if written is not None:
        document["values_out"] = {"path": written.path, "changed": written.changed,
                                  "backup": written.backup}  # fmt: skip
        text += f"\nvalues written to {written.path}" + (
            f" (previous kept as {written.backup})" if written.backup else ""
        )
    _emit(args.json, document, text, redactor)
    return 0


def run_tools(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands import tools

    cfg = tools.this_settings(env)
    if args.download_to is None:
        if args.platform:
            raise BadInput("--platform is for --download-to")
        choices = tools.tools.resolve_all(("kubectl", "helm", "k3d"), env, cfg)
        document = {name: tools.choice_json(choice) for name, choice in choices.items()}
        _emit(args.json, {"tools": document},
              "\n".join(tools.choice_text(c) for c in choices.values()), redactor)  # fmt: skip
        return 0
    platforms = tools.parse_platforms(args.platform, cfg)
    filled = tools.fill_mirror(os.path.expanduser(args.download_to), platforms, env, cfg)
    _emit(args.json, tools.filled_json(filled), tools.filled_text(filled), redactor)
    if not filled.complete:
        _fail("some tools have no verified checksum pinned in this build (listed above)",
              "nothing unverified was written; use a build whose pins are complete")  # fmt: skip
        return 1
    return 0


RESUME = ("the values file is intact; run tracebloc-installer again to resume "
          "(it recovers a half-finished helm release first)")  # fmt: skip


def run_install(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.install import install, install_json, log_path_for, summary
    from installer.commands.plan import check_paths
    from installer.config import install_settings, plan_config
    from installer.present.ui import Ui

    probe_cfg = _probe_config(args, env)
    cfg = plan_config(env, probe_cfg, os_=os_name(sys.platform), chart=args.chart)
    redactor.add(*cfg.secrets)
    check_paths(cfg, env, args.chart)
    settings = install_settings(env)
    _stop_cleanly_on_termination()
    # The spinner only when a person watches both streams (stdout piped to a file or `jq`
    # means a script is reading), and not under --verbose, whose log lines would garble it.
    watched = not args.verbose and is_terminal(sys.stdout) and is_terminal(sys.stderr)
    ui = Ui(sys.stderr, env=env, redactor=redactor, is_tty=watched)
    log_path = log_path_for(cfg)
    handler = _log_to_file(log_path, redactor, ui)
    log.info("tracebloc-installer %s: install (%s)", __version__,
             "non-interactive" if args.yes else "interactive")  # fmt: skip
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
    _emit(args.json, install_json(outcome, shown_log), summary(outcome, shown_log), redactor)
    return 0


def run_status(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.status import gather_status
    from installer.present.health import status_json, status_text

    status = gather_status(_probe_config(args, env), env, redactor)
    _emit(args.json, status_json(status), status_text(status), redactor)
    return 0 if status.healthy else 1


def run_diagnose(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.diagnose import collect, plan_config_or_reason
    from installer.config import data_dir

    probe_cfg = _probe_config(args, env)
    plan_cfg, reason = plan_config_or_reason(env, probe_cfg)
    if plan_cfg is not None:
        redactor.add(*plan_cfg.secrets)
    sys.stderr.write("collecting diagnostics (secrets are masked before anything is written) ...\n")
    written = collect(probe_cfg, plan_cfg, reason, env, redactor,
                      data_dir=data_dir(env, os_name(sys.platform)))  # fmt: skip
    text = f"support bundle written: {written.path}"
    text += "".join(f"\n  note: {note}" for note in written.notes)
    _emit(args.json, {"bundle": written.path, "files": list(written.files),
                      "notes": list(written.notes)}, text, redactor)  # fmt: skip
    return 0


def run_uninstall(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands import uninstall
    from installer.commands.credentials import open_terminal
    from installer.config import data_dir

    cfg = _probe_config(args, env)
    options = uninstall.Options(args.delete_data, args.delete_cluster)
    tools = uninstall.find(env, redactor, options)
    survey = uninstall.survey(cfg, tools, data_dir(env, os_name(sys.platform)), options)
    remove, keep = uninstall.plan(survey, options)
    if not remove:
        _emit(args.json, {"removed": [], "kept": keep},
              "nothing to remove: " + f"no release {cfg.release} in namespace {cfg.namespace}",
              redactor)  # fmt: skip
        return 0
    shown = ["will remove:", *(f"  {r}" for r in remove), "will keep:", *(f"  {k}" for k in keep)]
    sys.stderr.write(redactor("\n".join(shown)) + "\n")
    if not args.yes:
        terminal = open_terminal(os_name(sys.platform))
        if terminal is None:
            raise BadInput("uninstall asks before it removes anything, and there is no terminal "
                           "to ask on", "run it again with --yes to confirm")  # fmt: skip
        try:
            agreed = terminal.ask("Remove these? [y/N] ").strip().lower() in ("y", "yes")
            if agreed and args.delete_data:
                typed = terminal.ask(f"Type the namespace ({cfg.namespace}) to delete its data: ")
                agreed = typed.strip() == cfg.namespace
        except EOFError:
            agreed = False
        if not agreed:
            _emit(args.json, {"removed": [], "kept": remove + keep}, "nothing was removed",
                  redactor)  # fmt: skip
            return 1
    done = uninstall.execute(survey, tools, cfg, options)
    _emit(args.json, {"removed": done, "kept": keep},
          "\n".join(done + [f"kept: {k}" for k in keep]), redactor)  # fmt: skip
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stopped like Ctrl-C, but the exit code names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = int(signum)


def _stop_cleanly_on_termination() -> None:
    """SIGTERM (a service manager, `kill`) and SIGHUP (the terminal closed) stop an install
    the way Ctrl-C does: helm is asked to stop, so no release is left pending."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise Terminated(signum)

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                signal.signal(number, interrupt)
            except (ValueError, OSError):  # not the main thread, or not allowed here
                pass


def _log_to_file(path: str, redactor: Redactor, ui: Ui) -> logging.Handler | None:
    """The install log; an install still runs when the log cannot be written."""
    from installer.present.ui import open_log

    try:
        handler = open_log(path, redactor)
    except InstallerError as exc:
        ui.warn(f"{exc.message}; continuing without a log file")
        return None
    root = logging.getLogger("installer")
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    return handler


def _emit(as_json: bool, document: dict[str, Any], text: str, redactor: Redactor) -> None:
    """Everything printed passes the redactor: a tool's error may echo a proxy URL."""
    if as_json:
        sys.stdout.write(json.dumps(_redact_all(document, redactor), indent=2) + "\n")
    else:
        sys.stdout.write(redactor(text) + "\n")
    sys.stdout.flush()


def _redact_all(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {key: _redact_all(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_all(item, redactor) for item in value]
    return value


def _fail(message: str, remedy: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    for line in remedy.splitlines():
        sys.stderr.write(f"  {line}\n")
    sys.stderr.flush()


def _configure_logging(verbose: bool, redactor: Redactor) -> None:
    logging.raiseExceptions = False  # a log that cannot be written is not worth a traceback
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter(redactor))
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    # The console shows warnings (debug with --verbose) even when the log file takes all.
    handler.setLevel(logging.DEBUG if verbose else logging.WARNING)
    root = logging.getLogger("installer")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    root.propagate = False


def _tolerant_console() -> None:
    # A Windows console may be cp1252 and a pipe may be ASCII: never die printing a node name.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="replace")
            except (ValueError, OSError):
                pass
