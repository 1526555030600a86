"""Command line: options → configuration → pipeline → output and exit code.

The only module that prints outcomes or chooses exit codes: 0 answered, 1 failed (or the
cluster cannot be reached), 2 bad input, 3 refused to protect what is installed,
130 interrupted (Ctrl-C), 143 terminated (SIGTERM; 129 for
SIGHUP). With `--json` every outcome, failures included, is one JSON object on
stdout.

Subcommands are rows of `COMMANDS`: a name, its help, its own options and the function that
runs it. Options given without a subcommand mean `install` (`tracebloc-installer --yes`).
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from installer import __version__
from installer.decide import printable
from installer.decide.errors import BadInput, InstallerError
from installer.decide.model import os_name
from installer.decide.redact import RedactingFilter, Redactor
from installer.present.console import is_terminal, owns_console, pause

if TYPE_CHECKING:
    from installer.commands import uninstall
    from installer.config import InstallSettings, PlanConfig, ProbeConfig
    from installer.present.ui import Ui

# Each command imports what it needs when it runs: `--version` and `--help` stay instant in
# the frozen binary, which unpacks every module it imports.

log = logging.getLogger("installer")
PROG = "tracebloc-installer"
DEFAULT_COMMAND = "install"  # what a bare run (a double-click, `curl … | sh`) does

EPILOG = """\
examples:
  tracebloc-installer                     install, asking for what is missing and before
                                          changing anything
  tracebloc-installer --yes               install without questions (automation;
                                          credentials from the environment)
  tracebloc-installer plan                what install would do, decided the same way;
                                          changes nothing
  tracebloc-installer plan --values-out values.yaml --json
  tracebloc-installer --context prod-eu -n team-a --yes
  tracebloc-installer probe --json        the machine, the cluster and the sizing
  tracebloc-installer version --json

main environment variables (all of them: MIGRATION.md):
  TRACEBLOC_CLIENT_ID, TRACEBLOC_CLIENT_PASSWORD
                                the client's credentials (else asked on the terminal)
  TRACEBLOC_TRAINING_RESOURCES  the training size, e.g. cpu=4,memory=16Gi
  TB_NAMESPACE                  namespace and release name (default: tracebloc)
  HOST_DATA_DIR                 values file and log (default: ~/.tracebloc)
  KUBECONFIG                    the kubeconfig kubectl and helm read
  HTTPS_PROXY, NO_PROXY         a proxy between you and the cluster or backend
  TB_SET_CONTEXT_NAMESPACE=0    leave the kube context's default namespace alone
  TRACEBLOC_KUBECTL, TRACEBLOC_HELM   the tool binaries to use

exit codes:
  0    done (probe/plan: answered)
  1    failed, or the cluster cannot be reached; the message says what to do next
  2    bad input: a flag or variable that cannot be used as given (named in the message)
  3    refused to protect what is installed (another client, or something unreadable)
  130  interrupted

log: install appends every command it runs, secrets masked, to HOST_DATA_DIR/install.log
(default ~/.tracebloc/install.log; %USERPROFILE%\\.tracebloc\\install.log on Windows).
"""

Runner = Callable[[argparse.Namespace, dict[str, str], Redactor], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Runner
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    cluster: bool = True  # takes --namespace, --kubeconfig, --context, --verbose


class _Parser(argparse.ArgumentParser):
    """Usage errors are BadInput: one line, exit 2, and JSON under --json like any other."""

    def error(self, message: str) -> NoReturn:
        raise BadInput(f"{message}", f"see {self.prog} --help")

    def print_help(self, file: Any = None) -> None:
        """Help goes where every answer goes (argparse would drop a failed write and exit
        0, or leave Python to fail at exit with 120): a closed or full stdout is one line on
        stderr (silence for a reader that went away) and exit 1, as for any command."""
        if file is not None:
            super().print_help(file)
        elif not _write_stdout(self.format_help()):
            raise SystemExit(1)


def _chart_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chart", metavar="REF", help="chart reference or directory "
                        "(default: tracebloc/client)")  # fmt: skip
    parser.add_argument("--keep-context-namespace", action="store_true",
                        help="leave the kube context's default namespace as it is "
                        "(TB_SET_CONTEXT_NAMESPACE=0)")  # fmt: skip


def _plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--values-out", metavar="PATH",
                        help="also write the values file here (its directory must exist)")  # fmt: skip
    _chart_option(parser)


def _install_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", "--non-interactive", "-y", dest="yes", action="store_true",
                        help="never prompt (automation): missing input is an error")  # fmt: skip
    _chart_option(parser)
    # Read before argparse (decide/variables.translate_argv); listed here for --help.
    parser.add_argument("--data-dir", metavar="PATH", dest="_data_dir",
                        help="the engine's data directory (same as HOST_DATA_DIR=PATH)")  # fmt: skip
    parser.add_argument("--reuse-data", action="store_true", dest="_reuse_data",
                        help="keep data an earlier client left there (TB_LEFTOVER_ACTION=reuse)")  # fmt: skip
    parser.add_argument("--wipe-data", action="store_true", dest="_wipe_data",
                        help="delete data an earlier client left there (TB_LEFTOVER_ACTION=wipe)")  # fmt: skip


def _common(parser: argparse.ArgumentParser, cluster: bool) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    if not cluster:
        return
    parser.add_argument("--namespace", "-n", help="namespace and release name (default: "
                        "TB_NAMESPACE, else tracebloc)")  # fmt: skip
    parser.add_argument("--kubeconfig", help="kubeconfig file for kubectl and helm")
    parser.add_argument("--context", help="kubeconfig context for kubectl and helm")
    parser.add_argument("--verbose", "-v", action="store_true", help="log each tool call to stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Install the tracebloc client: probe, size, render and apply its Helm "
        "release. Options given without a command mean `install`.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help,
                                  epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
        _common(sub, command.cluster)
        command.options(sub)
    return parser


def with_default_command(argv: Sequence[str]) -> list[str]:
    """`tracebloc-installer --yes` is `install --yes`; `-V`/`--version` is `version`."""
    argv = list(argv)
    if not argv:
        return [DEFAULT_COMMAND]
    if argv[0] in ("-V", "--version"):
        return ["version", *argv[1:]]
    if argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        return [DEFAULT_COMMAND, *argv]
    return argv


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    try:
        _tolerant_console()
        argv = list(sys.argv[1:] if argv is None else argv)
        bare = not argv
        frozen = bool(getattr(sys, "frozen", False))
        code = _main(argv, dict(os.environ if env is None else env))
        if bare and owns_console(os_name(sys.platform), frozen) and _stdin_is_terminal():
            pause()
        return code
    except KeyboardInterrupt:
        # Ctrl-C before a command took over (or after it answered): an exit code, never a
        # traceback, and never the death-by-signal a frozen binary's launcher may hide.
        return 130


def _stdin_is_terminal() -> bool:
    return is_terminal(sys.stdin)


def _main(argv: list[str], env: dict[str, str]) -> int:
    as_json = "--json" in argv  # known before parsing: a bad flag answers in JSON too
    redactor = Redactor()
    from installer.decide.variables import notices, translate_argv

    # The twins' flags mean what they meant, or stop here naming what replaced them.
    old = translate_argv(argv)
    if old.refused:
        return _failed(as_json, 2, old.refused, "")
    env.update(old.env)
    for note in old.notes + notices(env):
        _stderr(f"note: {printable.shown(note)}\n")
    argv = with_default_command(old.argv)
    command = argv[0] if argv else ""
    try:
        args = build_parser().parse_args(argv)  # --help exits here, before any import
        from installer.config import env_secrets
        from installer.edges.frozen import prepare_children

        prepare_children()
        redactor.add(*env_secrets(env))
        _configure_logging(getattr(args, "verbose", False), redactor)
        runner = next(c.run for c in COMMANDS if c.name == args.command)
        return runner(args, env, redactor)
    except InstallerError as exc:
        data = _redact_all(getattr(exc, "data", None) or {}, redactor)  # e.g. the network report
        return _failed(as_json, exc.exit_code, redactor(exc.message), redactor(exc.remedy), data)
    except KeyboardInterrupt as exc:
        # The child that was running has already been stopped by proc (asked first, for
        # helm) or by probe.concurrently for reads in worker threads. An interrupt that
        # knows what it left behind (the readiness wait) says so itself. The shell's
        # convention, which the twins kept: 128 + the signal's number.
        said = getattr(exc, "remedy", "")
        code = 128 + exc.signum if isinstance(exc, Terminated) else 130
        return _failed(as_json, code, "terminated" if isinstance(exc, Terminated) else
                       "interrupted", said or (RESUME if command == "install" else ""))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no tracebacks
        log.debug("internal error", exc_info=True)
        return _failed(as_json, 1, f"internal error: {redactor(repr(exc))}",
                       "please report this; run again with --verbose for details")  # fmt: skip


def _failed(as_json: bool, code: int, message: str, remedy: str,
            data: dict[str, Any] | None = None) -> int:  # fmt: skip
    _fail(message, remedy)
    if as_json:
        document: dict[str, Any] = {"ok": False, "exit": code, "reason": message}
        if remedy:
            document["remedy"] = remedy
        document.update(data or {})
        _write_stdout(json.dumps(document, indent=2) + "\n")
    return code


# --- the commands ------------------------------------------------------------------------


def _check_kubeconfig_variable(env: dict[str, str]) -> None:
    """KUBECONFIG naming no file that exists is bad input, as a missing --kubeconfig is:
    kubectl would silently fall back to localhost:8080 and be refused. (A list with at least
    one file is what kubectl merges.)"""
    raw = env.get("KUBECONFIG", "")
    paths = [p for p in raw.split(os.pathsep) if p.strip()]
    if paths and not any(os.path.isfile(os.path.expanduser(p)) for p in paths):
        raise BadInput(f"KUBECONFIG={raw!r} names no file that exists",
                       "point KUBECONFIG at your kubeconfig file, or unset it (then "
                       "~/.kube/config is used, or the local cluster is created)")  # fmt: skip


def _probe_config(args: argparse.Namespace, env: dict[str, str]) -> ProbeConfig:
    from installer.config import probe_config

    kubeconfig = os.path.expanduser(args.kubeconfig) if args.kubeconfig else None
    if kubeconfig and not os.path.isfile(kubeconfig):
        raise BadInput(f"--kubeconfig {args.kubeconfig!r} is not a file")
    if not kubeconfig:
        _check_kubeconfig_variable(env)
    from installer.edges import kubeconfig as kubeconfig_files

    kubeconfig_files.check_files(env, os_name(sys.platform), kubeconfig,  # no FIFO, no bomb
                                 parse=args.command != "probe")  # fmt: skip
    return probe_config(env, namespace=args.namespace, kubeconfig=kubeconfig,
                        context=args.context)  # fmt: skip


def run_version(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.buildinfo import build_info, version_line

    info = build_info()
    if not _emit(args.json, dict(info), version_line(info), redactor):
        return 1
    return 0


def run_probe(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.probe import gather
    from installer.present import report

    cfg = _probe_config(args, env)
    facts = gather(cfg, env, redactor)
    return 0 if _emit(args.json, report.probe_json(facts), report.probe_text(facts), redactor) else 1


def _validated(
    args: argparse.Namespace, env: dict[str, str], redactor: Redactor
) -> tuple[PlanConfig, InstallSettings]:
    """Every setting install reads, checked the same way for `plan` and `install`: what
    one refuses (exit 2, naming the variable), the other refuses too."""
    from installer.commands.plan import check_paths
    from installer.config import install_settings, plan_config
    from installer.decide import preflight
    from installer.edges import backend

    probe_cfg = _probe_config(args, env)
    cfg = plan_config(env, probe_cfg, os_=os_name(sys.platform), chart=args.chart)
    redactor.add(*cfg.secrets)
    check_paths(cfg, env, args.chart)
    settings = install_settings(env, keep_context=args.keep_context_namespace)
    preflight.skipped(env)
    preflight.thresholds(env)
    backend.backend_url(cfg.client_env, env)
    backend.ca_bundle(env)
    return cfg, settings


def run_plan(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.dryrun import plan_install
    from installer.edges.valuesfile import write_values
    from installer.present import report

    cfg, settings = _validated(args, env, redactor)
    if args.values_out and cfg.values_given:
        raise BadInput("--values-out cannot be used with TRACEBLOC_VALUES_FILE: "
                       "install would write no values file")  # fmt: skip
    if args.values_out:
        directory = os.path.dirname(os.path.abspath(os.path.expanduser(args.values_out)))
        if not os.path.isdir(directory):
            raise BadInput(f"--values-out {args.values_out!r}: the directory {directory} "
                           "does not exist", "create it first, or name a file in an "
                           "existing directory")  # fmt: skip
    plan = plan_install(cfg, env, redactor, settings)
    written = None
    if args.values_out and plan.data is not None:
        written = write_values(os.path.expanduser(args.values_out), plan.data, env=env,
                               os_=plan.facts.machine.os)  # fmt: skip
    document = report.plan_json(plan)
    text = report.plan_text(plan)
    if written is not None:
        document["values_out"] = {"path": written.path, "changed": written.changed,
                                  "backup": written.backup}  # fmt: skip
        text += f"\nvalues written to {written.path}" + (
            f" (previous kept as {written.backup})" if written.backup else ""
        )
    stops = plan.verdict is not None and plan.verdict.action in ("refused", "blocked")
    code = plan.verdict.exit_code if plan.verdict and stops else 0
    net_code, net_lines = _plan_network(cfg, env, plan, document)
    code, text = code or net_code, "\n".join([text, *net_lines])
    document["ok"], document["exit"] = code == 0, code
    if not _emit(args.json, document, text, redactor):
        return 1
    if plan.verdict and plan.verdict.action == "blocked" and plan.verdict.error:
        error = plan.verdict.error  # the line install stops with, on stderr as install says it
        _fail(redactor(error.message), redactor(error.remedy))
    return code


def _plan_network(cfg: PlanConfig, env: dict[str, str], plan: Any,
                  document: dict[str, Any]) -> tuple[int, list[str]]:  # fmt: skip
    """install's network preflight, shown by plan (commands/network.py): 1 on a stop."""
    from installer.commands import network
    from installer.present import netreport

    report = network.check(cfg, env, tools=network.tool_urls(plan.facts.tools))
    document["network"] = netreport.as_json(report)
    return (1 if report.stop else 0), netreport.text_lines(report)


def _uninstall_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--yes", "-y", action="store_true",
                     help="do not ask: confirms everything asked for")  # fmt: skip
    sub.add_argument("--delete-data", action="store_true",
                     help="also delete the release's volume claims and HOST_DATA_DIR/<release> "
                          "(the values file and log too when nothing else is there)")  # fmt: skip
    sub.add_argument("--delete-cluster", action="store_true",
                     help="also delete the local k3d cluster, if tracebloc-installer created it "
                          "(helm then talks to its own context k3d-CLUSTER_NAME only)")  # fmt: skip


def _tools_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--download-to", metavar="DIR",
                     help="download the pinned tools, verified, into DIR "
                          "(for TRACEBLOC_TOOLS_MIRROR on a machine without internet)")  # fmt: skip
    sub.add_argument("--platform", action="append", metavar="OS-ARCH",
                     help="with --download-to: linux-x86_64, linux-arm64, darwin-x86_64, "
                          "darwin-arm64, windows-x86_64 or all (default: this machine's; "
                          "repeatable)")  # fmt: skip


def run_tools(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands import tools
    from installer.present import tools as present_tools

    cfg = tools.this_settings(env)
    if args.download_to is None:
        if args.platform:
            raise BadInput("--platform is for --download-to")
        choices = tools.tools.resolve_all(("kubectl", "helm", "k3d"), env, cfg)
        document = {name: present_tools.choice_json(choice) for name, choice in choices.items()}
        _emit(args.json, {"tools": document},
              "\n".join(present_tools.choice_text(c) for c in choices.values()), redactor)  # fmt: skip
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
    from installer.commands.runtime import refuse_sudo_wrapped
    from installer.edges.hostdirs import check_writable
    from installer.present.ui import Ui

    refuse_sudo_wrapped(env, os_name(sys.platform))  # before any file is made, as the twin
    cfg, settings = _validated(args, env, redactor)
    # Before the log opens and before anything else: the data directory must take files.
    check_writable(cfg.host_data_dir, env, os_name(sys.platform))
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
    document = {"ok": True, "exit": 0, **install_json(outcome, shown_log)}
    # The install is done whatever happens to stdout: its exit code says so.
    _emit(args.json, document, summary(outcome, shown_log), redactor)
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
    from installer.config import data_dir

    options = uninstall.Options(args.delete_data, args.delete_cluster)
    cfg = uninstall.pinned(_probe_config(args, env), env, options)
    tools = uninstall.find(env, redactor, options)
    where = data_dir(env, os_name(sys.platform))
    with uninstall.locked(env, where, cfg, options):
        return _uninstall(args, cfg, tools, uninstall.survey(cfg, tools, where, options),
                          options, redactor)  # fmt: skip


def _uninstall(args: argparse.Namespace, cfg: ProbeConfig, tools: uninstall.Tools,
               survey: uninstall.Survey, options: uninstall.Options, redactor: Redactor) -> int:
    """Confirm what the survey found, under the lock `run_uninstall` holds, then remove it."""
    from installer.commands import uninstall
    from installer.commands.credentials import open_terminal

    remove, keep = uninstall.plan(survey, options)
    if not remove:
        _emit(args.json, {"removed": [], "kept": keep},
              "nothing to remove: " + f"no release {cfg.release} in namespace {cfg.namespace}",
              redactor)  # fmt: skip
        return 0
    shown = [*uninstall.target_lines(survey), "will remove:", *(f"  {r}" for r in remove),
             "will keep:", *(f"  {k}" for k in keep)]  # fmt: skip
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


def run_prepare_host(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    """The privileged half alone (the twin's `prepare-host`): Docker installed, started and
    enabled, TB_PREPARE_USER granted; no question, no cluster, no credentials."""
    from installer.commands.runtime import prepare_host
    from installer.config import parse_timeout
    from installer.edges.machine import read_machine
    from installer.present.ui import Ui

    ui = Ui(sys.stderr, env=env, redactor=redactor, is_tty=False)
    if os_name(sys.platform) == "windows":
        return _prepare_windows_host(args, env, redactor, ui)
    done = prepare_host(env, redactor, ui, os_name(sys.platform), read_machine(env),
                        parse_timeout(env))  # fmt: skip
    target = env.get("TB_PREPARE_USER", "").strip()
    text = "\n".join(["host prepared; done:", *(f"  {line}" for line in done)]
                     + ([f"{target} can now install as themselves (a new login may be needed "
                         "for the docker group)"] if target and target != "root" else []))  # fmt: skip
    _emit(args.json, {"ok": True, "done": done, "user": target or None}, text, redactor)
    return 0


def _prepare_windows_host(args: argparse.Namespace, env: dict[str, str], redactor: Redactor,
                          ui: Any) -> int:  # fmt: skip
    """Windows, as administrator (IT, or the engine's own elevated child): the privileged
    half of the host preparation (commands/winhost.py), recorded for the daily user's half."""
    from installer.commands import winhost
    from installer.config import data_dir
    from installer.decide.preflight import thresholds

    said: list[str] = []
    exe, _ = winhost.engine_command()
    plan = winhost.prepare(exe, env, winhost.options(env, thresholds(env).min_mem_gib), redactor,
                           data_dir(env, "windows"), ask=None, say=said.append,
                           our_cluster_running=None, elevated_child=True)  # fmt: skip
    text = "\n".join(["host prepared; done:", *(f"  {line}" for line in said)] if said
                     else ["nothing to prepare: Docker Desktop answers"])  # fmt: skip
    _emit(args.json, {"ok": True, "done": said, "user": plan.user or None}, text, redactor)
    return 0


def _prepare_host_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--verbose", "-v", action="store_true", help="log each tool call to stderr")
    sub.add_argument("--yes", "-y", action="store_true",
                     help="accepted; prepare-host never asks (the administrator's sudo is the consent)")


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: stopped like Ctrl-C, but the exit code names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = int(signum)


COMMANDS: list[Command] = [
    Command("install", "install or upgrade the client (the default: what a bare run does)",
            run_install, _install_options),  # fmt: skip
    Command("plan", "show what install would do, decided the same way; change nothing",
            run_plan, _plan_options),  # fmt: skip
    Command("probe", "read the machine and cluster; change nothing", run_probe),
    Command("version", "print the version, build commit and date", run_version, cluster=False),
    Command("tools", "show where kubectl, helm and k3d come from; --download-to fills a mirror",
            run_tools, _tools_options),  # fmt: skip
    Command("status", "is the client healthy? exit 0 when it is, 1 when not; change nothing",
            run_status),  # fmt: skip
    Command("diagnose", "write one support bundle (secrets masked) and print its path",
            run_diagnose),  # fmt: skip
    Command("uninstall", "remove the client's release; keeps its data unless --delete-data",
            run_uninstall, _uninstall_options),  # fmt: skip
    Command("prepare-host", "administrators: install, start and enable Docker and grant "
            "TB_PREPARE_USER the docker group; nothing else", run_prepare_host,
            _prepare_host_options, cluster=False),  # fmt: skip
]


# --- plumbing ------------------------------------------------------------------------------


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


def _emit(as_json: bool, document: dict[str, Any], text: str, redactor: Redactor) -> bool:
    """Everything printed passes the redactor: a tool's error may echo a proxy URL.
    False when stdout could not take it (closed, full, gone)."""
    if as_json:
        return _write_stdout(json.dumps(_redact_all(document, redactor), indent=2) + "\n")
    return _write_stdout(printable.shown(redactor(text)) + "\n")  # cluster text: ESC shown, not sent


def _write_stdout(text: str) -> bool:
    """One line on stderr, or silence for a reader that went away (`| head`): never a
    traceback, and nothing left buffered for the interpreter to fail on at exit."""
    stream = sys.stdout
    try:
        if stream is None:
            raise OSError(errno.EBADF, "standard output is closed")
        stream.write(text)
        stream.flush()
        return True
    except (OSError, ValueError) as exc:
        _silence_stdout()
        if getattr(exc, "errno", None) != errno.EPIPE:
            reason = getattr(exc, "strerror", None) or str(exc) or "closed"
            _stderr(f"error: cannot write to standard output: {reason}\n")
        return False


def _silence_stdout() -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
    except OSError:
        pass
    if sys.stdout is not None:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit
        except OSError:
            pass


def _stderr(text: str) -> None:
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _redact_all(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {key: _redact_all(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_all(item, redactor) for item in value]
    return value


def _fail(message: str, remedy: str) -> None:
    # A message may quote the cluster (a helm error, a clientId): control characters are
    # shown escaped, never sent to the terminal.
    lines = [f"error: {printable.shown(message)}\n"] + [f"  {line}\n" for line in printable.shown(remedy).splitlines()]
    _stderr("".join(lines))


class _ConsoleFormat(logging.Formatter):
    """The console's one format, the same as the progress lines: `[12:03:04] text`, with
    `warning:` before warnings."""

    def __init__(self) -> None:
        super().__init__("[%(asctime)s] %(message)s", datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if record.levelno >= logging.WARNING and not record.getMessage().startswith("warning:"):
            stamp, _, rest = text.partition("] ")
            text = f"{stamp}] warning: {rest}"
        # Continuation lines indented, never unstamped; control characters shown escaped.
        return printable.shown(text).replace("\n", "\n  ")


def _not_progress(record: logging.LogRecord) -> bool:
    # The progress display prints its own lines; its records are for the log file only.
    return not record.name.startswith("installer.present.ui")


def _configure_logging(verbose: bool, redactor: Redactor) -> None:
    logging.raiseExceptions = False  # a log that cannot be written is not worth a traceback
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter(redactor))
    handler.addFilter(_not_progress)
    handler.setFormatter(_ConsoleFormat())
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
