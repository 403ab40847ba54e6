"""docs/live.md's Python example (a small recommendation service over CURVE) runs as written."""

import re
from pathlib import Path

import pytest

DOC = (Path(__file__).parents[1] / "docs" / "live.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, re.S)


def test_live_doc_has_the_service_example():
    assert any("LiveNode" in block and "ZmqTransport" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS)
def test_live_doc_example_runs(block):
    exec(compile(block, "docs/live.md", "exec"), {})
