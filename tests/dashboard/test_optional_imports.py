"""An optional module another library imports on first use is imported while the app is built,
in the thread building it, never first in a request or the warm-up thread (a request encoding a
figure then met a partially initialised pandas and answered 500 on `serve --workers 2`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# A stand-in `pandas` that takes a while to import and records the thread importing it.
SLOW_PANDAS = """
import threading, time
IMPORTED_IN = threading.current_thread().name
time.sleep(0.3)
class Series: pass
class DataFrame: pass
class Index: pass
class DatetimeIndex: pass
NaT = object()
NA = object()
"""

PROBE = """
import json, sys
from dashboard.app import create_app
create_app(sys.argv[1])
pd = sys.modules.get("pandas")
print(json.dumps({"imported_in": getattr(pd, "IMPORTED_IN", None), "whole": hasattr(pd, "NA")}))
"""


def test_pandas_is_imported_whole_by_the_thread_building_the_app(tmp_path: Path) -> None:
    (tmp_path / "site" / "pandas").mkdir(parents=True)
    (tmp_path / "site" / "pandas" / "__init__.py").write_text(SLOW_PANDAS)
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(repo)])}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "store")],
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"imported_in": "MainThread", "whole": True}
