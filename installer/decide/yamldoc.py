"""The one YAML loader of the engine: safe_load's types, with depth and alias expansion bounded.

PyYAML composes recursively and shares aliased nodes, so deep nesting or a "billion laughs"
of anchors would never finish walking; both are refused before anything reads the document.
"""

from __future__ import annotations

from typing import Any

import yaml

from installer.decide.errors import BadInput

MAX_DEPTH = 100
# Nodes the document would have once every alias is expanded. Without aliases that is the
# number of nodes written, which the file-size cap bounds; aliases may add this many.
MAX_EXPANDED = 100_000


class BadYaml(BadInput):
    """The file is not YAML the engine reads: invalid, too deep, or an alias bomb."""


class UnsafeYaml(BadYaml):
    """Too deep or an alias bomb: hostile rather than merely broken."""


class _TooDeep(yaml.YAMLError):
    pass


class _Loader(yaml.SafeLoader):
    depth = 0

    # The scanner meets `[[[[…` long before the composer: stop it there, not 5,000 levels on.
    def fetch_flow_sequence_start(self) -> None:
        self._flow_bound()
        super().fetch_flow_sequence_start()

    def fetch_flow_mapping_start(self) -> None:
        self._flow_bound()
        super().fetch_flow_mapping_start()

    def _flow_bound(self) -> None:
        if self.flow_level >= MAX_DEPTH:
            raise _TooDeep(f"nested more than {MAX_DEPTH} levels deep")

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _TooDeep(f"nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _expanded(root: yaml.Node) -> int | None:
    """The node count with every alias expanded, or None past MAX_EXPANDED (or for a node
    that contains itself, which no expansion ends)."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()

    def size(node: yaml.Node) -> int | None:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in busy:
            return None
        busy.add(key)
        total = 1
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        for child in children:
            got = size(child)
            if got is None:
                return None
            total += got
            if total > MAX_EXPANDED:
                return None
        busy.discard(key)
        sizes[key] = total
        return total

    return size(root)


def load(data: bytes | str, origin: str, remedy: str = "fix it or move it aside") -> Any:
    """The document in `data` (None for an empty one); BadYaml names `origin` and what is
    wrong with it."""
    loader = _Loader(data)
    try:
        try:
            node = loader.get_single_node()
        except _TooDeep as exc:
            raise UnsafeYaml(f"{origin} is not usable YAML: {exc}", remedy) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise BadYaml(f"{origin} is not valid YAML{where}", remedy) from None
        if node is None:
            return None
        if _expanded(node) is None:
            raise UnsafeYaml(
                f"{origin} is not usable YAML: its aliases expand to more than "
                f"{MAX_EXPANDED:,} nodes (an alias bomb)",
                remedy,
            )
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:
            raise BadYaml(
                f"{origin} is not valid YAML: {getattr(exc, 'problem', None) or exc}", remedy
            ) from None
    finally:
        loader.dispose()
