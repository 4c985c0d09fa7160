"""Run layouts: directories, zips, retries, pairing, and hostile archives."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from ingest.errors import UnsafeArchiveError
from ingest.sources.artifacts import collect, dedupe_retries, logical_name, pair_key
from ingest.sources.files import MAX_FILE_BYTES
from ingest.sources.zips import safe_extract


def test_logical_name_strips_runner_retry_suffix() -> None:
    name = "bmk_agentic_kimik2.7_tp4_conc16_kvdram-lmcache_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_04"
    assert logical_name(name) == name[: -len("_mi355x-amds_04")]
    assert logical_name("bmk_x_h200-dgxc-slurm_3") == "bmk_x"
    assert logical_name("results_bmk") == "results_bmk"


def test_pair_key_joins_aggregate_raw_and_logs() -> None:
    sfx = "glm5.2_conc2_h200-dgxc-slurm_1"
    keys = {
        pair_key(f"{p}{sfx}")
        for p in ("bmk_agentic_", "agentic_", "multinode_server_logs_", "server_logs_", "bmk_")
    }
    assert keys == {sfx}


def _unit_names(tmp: Path) -> list[str]:
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    return sorted(u.name for u in collect(tmp / "run", work).units)


def test_directory_units_keep_nested_aiperf_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "agentic_x_h200_1" / "aiperf_artifacts").mkdir(parents=True)
    (run / "agentic_x_h200_1" / "aiperf_artifacts" / "profile_export_aiperf.json").write_text("{}")
    (run / "agentic_x_h200_1" / "vllm_command.txt").write_text("vllm serve m")
    (run / "bmk_agentic_x_h200_1").mkdir()
    (run / "bmk_agentic_x_h200_1" / "x.json").write_text("{}")
    work = tmp_path / "w"
    work.mkdir()
    c = collect(run, work)
    units = {u.name: u for u in c.units}
    assert sorted(units) == ["agentic_x_h200_1", "bmk_agentic_x_h200_1"]
    assert sorted(f.rel for f in units["agentic_x_h200_1"].files) == [
        "agentic_x_h200_1/aiperf_artifacts/profile_export_aiperf.json",
        "agentic_x_h200_1/vllm_command.txt",
    ]
    assert units["agentic_x_h200_1"].pair == units["bmk_agentic_x_h200_1"].pair
    assert c.default_run_id == "run"


def test_retried_artifacts_keep_the_newest(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for name, mtime in (
        ("bmk_a_h200-cw_1", 100),
        ("bmk_a_h200-cw_2", 200),
        ("bmk_b_h200-cw_1", 50),
    ):
        d = run / name
        d.mkdir(parents=True)
        f = d / "agg.json"
        f.write_text("{}")
        os.utime(f, (mtime, mtime))
    work = tmp_path / "w"
    work.mkdir()
    c = collect(run, work)
    assert sorted(u.name for u in c.units) == ["bmk_a_h200-cw_2", "bmk_b_h200-cw_1"]
    assert c.superseded == ["bmk_a_h200-cw_1"]
    kept, gone = dedupe_retries(c.units)
    assert len(kept) == 2 and gone == []


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_zip_of_an_artifact_becomes_a_unit_named_by_the_zip(tmp_path: Path) -> None:
    z = _zip(tmp_path / "bmk_agentic_x_h200_1.zip", {"x.json": b"{}"})
    work = tmp_path / "w"
    work.mkdir()
    c = collect(z, work)
    assert [u.name for u in c.units] == ["bmk_agentic_x_h200_1"]
    assert [f.rel for f in c.units[0].files] == ["bmk_agentic_x_h200_1.zip/x.json"]
    assert c.problems == []


@pytest.mark.parametrize("member", ["../evil.json", "/abs/evil.json", "a/../../evil.json"])
def test_zip_slip_is_refused(tmp_path: Path, member: str) -> None:
    z = _zip(tmp_path / "a.zip", {member: b"{}"})
    target = tmp_path / "t"
    target.mkdir()
    with pytest.raises(UnsafeArchiveError, match="escapes the extraction directory"):
        safe_extract(z, target)
    assert not (tmp_path / "evil.json").exists()


def test_symlink_member_is_refused(tmp_path: Path) -> None:
    z = tmp_path / "l.zip"
    with zipfile.ZipFile(z, "w") as zf:
        info = zipfile.ZipInfo("link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    target = tmp_path / "t"
    target.mkdir()
    with pytest.raises(UnsafeArchiveError, match="symbolic link"):
        safe_extract(z, target)


def test_zip_bomb_is_refused(tmp_path: Path) -> None:
    z = _zip(tmp_path / "bomb.zip", {"zeros.json": b"0" * (20 * 1024 * 1024)})
    target = tmp_path / "t"
    target.mkdir()
    with pytest.raises(UnsafeArchiveError, match="zip bomb"):
        safe_extract(z, target)


def test_member_inflating_past_its_declared_size_is_refused(tmp_path: Path) -> None:
    z = _zip(tmp_path / "lie.zip", {"a.json": b"x" * 5000})
    raw = bytearray(z.read_bytes())
    # Patch the central-directory uncompressed size (offset 24 in the entry) down to 10 bytes.
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    z.write_bytes(bytes(raw))
    target = tmp_path / "t"
    target.mkdir()
    with pytest.raises(UnsafeArchiveError):
        safe_extract(z, target)


def test_broken_zip_and_oversize_file_are_problems_not_crashes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "junk.zip").write_bytes(b"PK\x03\x04 not really")
    big = run / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    (run / "ok.json").write_text("{}")
    work = tmp_path / "w"
    work.mkdir()
    c = collect(run, work)
    reasons = {p.rel: p.reason for p in c.problems}
    assert reasons["junk.zip"].startswith("unsafe or broken archive: not a readable zip archive")
    assert (
        reasons["big.json"]
        == f"file is {MAX_FILE_BYTES + 1} bytes, over the {MAX_FILE_BYTES} byte limit"
    )
    assert [f.rel for u in c.units for f in u.files] == ["ok.json"]


def test_symlinked_file_is_not_followed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "secret.json").write_text("{}")
    (run / "link.json").symlink_to(tmp_path / "secret.json")
    work = tmp_path / "w"
    work.mkdir()
    c = collect(run, work)
    assert [p.rel for p in c.problems] == ["link.json"]
    assert "symbolic link" in c.problems[0].reason


def test_the_walk_lists_what_rglob_lists_in_its_order(tmp_path: Path) -> None:
    # _walk replaces sorted(root.rglob("*")) filtered to files and symlinks, hidden names skipped.
    from ingest.sources.files import walk as _walk

    root = tmp_path / "run"
    for d in ("a", "a-b", "a/b", "a/results/logs", "A", ".hidden", "sub/aiperf_artifacts"):
        (root / d).mkdir(parents=True, exist_ok=True)
    for f in (
        "a/x.json",
        "a-b/y.json",
        "a/b/z.json",
        "a/results/r.json",
        "a/results/logs/l.txt",
        "top.json",
        "A/Z.json",
        ".hidden/h.json",
        ".h.json",
        "sub/aiperf_artifacts/p.json",
        "a.b",
        "a0",
    ):
        (root / f).write_text("{}")
    (root / "link.json").symlink_to("top.json")
    (root / "dirlink").symlink_to("a")
    (root / "broken.json").symlink_to("missing.json")
    os.mkfifo(root / "fifo")
    expected = [
        (p, p.relative_to(root).as_posix())
        for p in sorted(root.rglob("*"))
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
        and (p.is_file() or p.is_symlink() or p.is_fifo())
    ]
    assert _walk(root) == expected
    # Special files are listed too: the reader refuses them by name instead of skipping them.
    assert "a/results/logs/l.txt" in [r for _, r in expected] and "fifo" in str(expected)


def test_a_unit_keeps_its_newest_mtime_and_nested_dirs_belong_to_it(tmp_path: Path) -> None:
    run = tmp_path / "bmk_x"
    (run / "results").mkdir(parents=True)
    (run / "agg.json").write_text("{}")
    (run / "results" / "raw.json").write_text("{}")
    os.utime(run / "agg.json", (1_000_000, 1_000_000))
    os.utime(run / "results" / "raw.json", (2_000_000, 2_000_000))
    work = tmp_path / "w"
    work.mkdir()
    c = collect(run, work)
    assert [(u.name, [f.rel for f in u.files], u.mtime) for u in c.units] == [
        ("bmk_x", ["agg.json", "results/raw.json"], 2_000_000.0)
    ]
    assert {f.artifact for f in c.units[0].files} == {"bmk_x"}
