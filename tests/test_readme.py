"""The README's Python examples run as written."""

import re
from pathlib import Path

import pytest

README = (Path(__file__).parents[1] / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS)
def test_readme_example_runs(block):
    exec(compile(block, "README.md", "exec"), {})


def test_readme_starts_with_the_two_commands():
    first = re.search(r"```bash\n(.*?)```", README, re.S).group(1).strip().splitlines()
    assert first[0].startswith("pip install . && mamab reproduce --quick")
    assert first[1] == 'pip install -e ".[test]" && python -m pytest'
