"""The CLI and the web give, byte for byte, what they gave before the `views/` move
(`tests/outputs.py` wrote `tests/golden_outputs/` with the code of the commit before it, and
again, for the points tables only, when they gained the `harness` and `harness_version` columns)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.outputs import OUT_DIR, outputs


def test_outputs_are_the_bytes_written_before_the_move(tmp_path: Path) -> None:
    expected = json.loads((OUT_DIR / "INDEX.json").read_text())
    got = outputs(tmp_path / "store")
    assert sorted(got) == expected
    differ = [name for name in expected if got[name] != (OUT_DIR / name).read_bytes()]
    assert differ == []
    # the requests answer, not only match: every one is a 200 (the CLI: exit 0) but the YAML of
    # a pruned list that does not validate as a master config, which is refused with a 422
    failed = {name for name, body in got.items() if not body.startswith((b"200\n", b"0\n"))}
    assert failed == {"web-minimax-m2.5-tep8-vs-dep8-pruned.yaml"}
    assert got["web-minimax-m2.5-tep8-vs-dep8-pruned.yaml"].startswith(b"422\n")
