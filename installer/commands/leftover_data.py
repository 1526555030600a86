"""Questions the local cluster asks a person: go ahead, and what to do with data an earlier
client left in the data directory. Data is never deleted without an explicit choice
(`--wipe-data`, TB_LEFTOVER_ACTION=wipe, or `w` at the prompt); with no choice and nobody to
ask, the install stops. The wipe itself waits for the one question's yes (`carry_out`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from installer.commands import credentials
from installer.decide.errors import BadInput, InstallerError
from installer.decide.localcluster_state import leftover_said
from installer.decide.settings import PlanConfig
from installer.edges import datadir
from installer.present.ui import Ui

if TYPE_CHECKING:
    from installer.decide.localcluster_state import Local

CHOICES = {
    "r": "reuse",
    "reuse": "reuse",
    "k": "reuse",
    "keep": "reuse",
    "w": "wipe",
    "wipe": "wipe",
    "n": "new",
    "new": "new",
}
HOW_TO_CHOOSE = (
    "run again with one of:\n"
    "  --reuse-data        keep the data and use it (TB_LEFTOVER_ACTION=reuse)\n"
    "  --wipe-data         delete it and start fresh (TB_LEFTOVER_ACTION=wipe)\n"
    "  --data-dir=PATH     install into another directory (HOST_DATA_DIR)\n"
    "  (TRACEBLOC_SKIP_LEFTOVER_GUARD=1 skips this check)"
)


def _terminal(os_: str) -> credentials.Terminal | None:
    return credentials.open_terminal(os_)


@dataclass(frozen=True)
class Choice:
    """What was chosen for an earlier client's data: the config (its data directory, which
    the cluster mounts) and the leftovers to delete once the go-ahead is given."""

    cfg: PlanConfig
    wipe: tuple[str, ...] = ()
    said: str = ""  # the plan's line for it ("" when there was nothing to choose)
    # Pinned when the wipe was chosen: the wipe deletes those and nothing else.
    shown: datadir.Shown | None = None


def guard(
    local: Local, cfg: PlanConfig, env: Mapping[str, str], ui: Ui, *, interactive: bool, os_: str
) -> Choice:
    """Only before a new cluster: an existing one keeps its data by design. Deletes
    nothing: a wipe chosen here is carried out after the go-ahead (`carry_out`)."""
    s = local.settings
    assert s is not None
    found = list(local.leftovers)
    if not found or not s.leftover_guard:
        return Choice(cfg)
    ui.warn(f"data of an earlier tracebloc client is in {cfg.host_data_dir}:")
    for path in found:
        ui.info(f"  {path}")
    try:  # pinned as shown: a wipe chosen below deletes these and nothing else
        pinned = datadir.shown(cfg.host_data_dir, found)
    except datadir.Changed as exc:
        raise InstallerError(f"{exc}; nothing was changed", HOW_TO_CHOOSE) from None
    node_local = s.storage_mode == "node-local"
    if node_local:
        ui.info(
            "node-local storage keeps its data inside the node: this data would be left "
            "on disk, not used"
        )
    action = s.leftover_action
    terminal = _terminal(os_) if interactive and action is None else None
    if action is None and terminal is None:
        raise InstallerError(
            "existing data found and no choice was given; nothing was changed", HOW_TO_CHOOSE
        )
    if action is None and terminal is not None:
        terminal.say(
            f"  [r] {'keep (left unused)' if node_local else 'reuse'}  [w] wipe  "
            "[n] another directory  [a] abort (default)"
        )
        try:
            action = CHOICES.get(terminal.ask("Choice [r/w/n/a]: ").strip().lower(), "abort")
        except EOFError:
            action = "abort"
    if action in ("reuse", "wipe"):
        said = leftover_said(action, cfg.host_data_dir, node_local=node_local)
        ui.info(f"earlier data in {said}")
        if action == "reuse":
            return Choice(cfg, said=said)
        return Choice(cfg, wipe=tuple(found), said=said, shown=pinned)
    if action == "new" and terminal is not None:
        try:
            raw = terminal.ask("New data directory: ").strip()
        except EOFError:
            raw = ""
        if not raw:
            raise InstallerError("no directory given; nothing was changed", HOW_TO_CHOOSE)
        new = moved(cfg, typed_dir(raw, env, os_, cfg.storage_mode))
        from installer.edges.hostdirs import check_files

        check_files(new.values_path)  # its files, as the first directory's were
        again = dataclasses.replace(local, leftovers=tuple(datadir.leftovers(new.host_data_dir)))
        chosen = guard(again, new, env, ui, interactive=interactive, os_=os_)
        moved_to = (
            f"{cfg.host_data_dir}: left untouched; the data directory is "
            f"{chosen.cfg.host_data_dir} (your choice)"
        )
        return dataclasses.replace(chosen, said=chosen.said or moved_to)
    raise InstallerError(
        f"stopped: the data in {cfg.host_data_dir} was left untouched", HOW_TO_CHOOSE
    )


def carry_out(choice: Choice, ui: Ui) -> PlanConfig:
    """After the go-ahead, before the cluster is created: the wipe that was chosen."""
    if not choice.wipe or choice.shown is None:
        return choice.cfg
    data_dir = choice.cfg.host_data_dir
    try:
        survivors = datadir.wipe(choice.shown)
    except datadir.Changed as exc:
        raise InstallerError(
            f"{exc}: the data shown is not what is there now, so nothing was "
            "deleted and the cluster was not created",
            "look at the directory, then run the installer again",
        ) from None
    if survivors:
        raise InstallerError(
            f"could not delete {', '.join(survivors)} (owned by another "
            "user, or a link); the cluster was not created",
            "remove them yourself, or choose another directory",
        )
    ui.info(f"deleted the earlier data in {data_dir} (your choice)")
    return choice.cfg


def clear_trash(data_dir: str, ui: Ui) -> None:
    """What a wipe agreed to earlier renamed aside and was killed before deleting: never
    data to reuse, so it goes before anything looks for leftovers."""
    for path in datadir.remove_trash(data_dir):
        ui.warn(f"could not delete {path}, the rest of an earlier wipe; remove it yourself")


def typed_dir(raw: str, env: Mapping[str, str], os_: str, storage_mode: str) -> str:
    """A directory typed at the prompt obeys HOST_DATA_DIR's rules: `~` is the home, a
    relative path is refused, and so is the home itself, a system path or a link."""
    from installer.decide.paths import absolute_path
    from installer.edges import hostdirs

    what = "the directory typed"
    path = absolute_path(raw, env, os_, what)
    for warning in hostdirs.check(env, os_, path, None, storage_mode, variable=what):
        logging.getLogger("installer").warning("%s", warning)
    return path


def moved(cfg: PlanConfig, data_dir: str) -> PlanConfig:
    """The config with another data directory (and the values file in it, unless the
    caller brought their own)."""
    if not data_dir or data_dir == os.path.abspath(os.sep):
        raise BadInput(f"{data_dir!r} cannot be the data directory")
    values = cfg.values_path if cfg.values_given else os.path.join(data_dir, "values.yaml")
    return dataclasses.replace(cfg, host_data_dir=data_dir, values_path=values)
