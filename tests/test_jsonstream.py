"""jsonstream.each_element agrees with json.loads, whatever the chunk boundaries."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from installer.edges import jsonstream
from installer.edges.kubectl import parse_nodes

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def streamed(data: bytes, chunk: int) -> list[Any]:
    found: list[Any] = []
    old = jsonstream.CHUNK
    jsonstream.CHUNK = chunk
    try:
        jsonstream.each_element(io.BytesIO(data), "items", found.append, found.clear)
    finally:
        jsonstream.CHUNK = old
    return found


@settings(max_examples=300, deadline=None)
@given(
    doc=st.dictionaries(st.text(max_size=6), values, max_size=4),
    items=st.lists(values, max_size=5),
    chunk=st.integers(1, 64),
    indent=st.sampled_from([None, 0, 4]),
)
def test_the_items_are_what_json_loads_sees(
    doc: dict[str, Any], items: list[Any], chunk: int, indent: int | None
) -> None:
    doc = {**doc, "items": items}
    data = json.dumps(doc, indent=indent, ensure_ascii=False).encode()
    assert streamed(data, chunk) == json.loads(data)["items"]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        pytest.param(b'{"items": [1, 2]} x', jsonstream.NotJson, id="extra-data"),
        pytest.param(b'{"items": [1, 2}', jsonstream.NotJson, id="bracket-mismatch"),
        pytest.param(b'{"items": [1, 2],}', jsonstream.NotJson, id="trailing-comma"),
        pytest.param(b'{"items": [1 2]}', jsonstream.NotJson, id="missing-comma"),
        pytest.param(b'{"items": [1, 2]', jsonstream.NotJson, id="cut-off"),
        pytest.param(b'{"items": [12', jsonstream.NotJson, id="cut-off-in-a-number"),
        pytest.param(b"", jsonstream.NotJson, id="empty"),
        pytest.param(b"[1, 2]", jsonstream.NotAnObject, id="a-list"),
        pytest.param(b'{"items": {"a": 1}}', jsonstream.NotAnObject, id="items-not-a-list"),
        pytest.param(b'{"kind": "List"}', jsonstream.NotAnObject, id="no-items"),
        pytest.param(
            b'{"items": [1], "items": null}', jsonstream.NotAnObject, id="last-duplicate-wins"
        ),
    ],
)
def test_what_json_loads_rejects_is_rejected(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        streamed(data, 3)


def test_a_number_cut_by_a_chunk_is_read_whole() -> None:
    assert streamed(b'{"items": [123456789]}', 2) == [123456789]


def test_bom_and_bad_bytes_are_tolerated_as_before() -> None:
    read = parse_nodes(b'\xef\xbb\xbf{"items": [{"metadata": {"name": "n\xff"}}]}')
    assert read.readable
    assert read.nodes[0].name == "n\ufffd"
