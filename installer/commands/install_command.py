"""The `install` command as a person runs it: the data directory checked first, the log
file, the pipeline (commands/install.py), then the summary and the commands to run next."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Mapping

from installer import __version__
from installer.decide.errors import InstallerError
from installer.decide.model import os_name
from installer.decide.redact import Redactor
from installer.edges import lifetime
from installer.present import options as surface
from installer.present import output
from installer.present.console import is_terminal

log = logging.getLogger("installer")


def run_install(args: argparse.Namespace, env: dict[str, str], redactor: Redactor) -> int:
    from installer.commands.install import install
    from installer.commands.settings import build
    from installer.decide.localcluster import release_dirs
    from installer.edges.hostdirs import check_files, check_writable
    from installer.present.summary import install_json, summary
    from installer.present.ui import Ui

    # The one read of the environment, as for every command; refuses a sudo-wrapped install.
    built = build(args, env, redactor, from_flags=getattr(args, "from_flags", None))
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
    status, ingest = next_commands(args, env, outcome.namespace)
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


def next_commands(
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
