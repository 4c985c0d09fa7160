"""Build the hostile-input corpus in `tests/reliability/hostile/` (run it, commit its output).

    uv run python -m tests.reliability.make_hostile

Every file is made here by hand from a small valid aggregate, so the corpus does not move when the
real fixtures do. `MANIFEST.json` records what ingest must make of each file:

- `rejected`: nothing stored from it; a reject names it and its reason contains `reason`;
- `partial`: some rows stored, the others rejected with `reason`;
- `accepted`: stored, with the `literal` column values kept exactly (and `length` of strings);
- `no_rows`: nothing stored, and the file is reported (rejected or ignored);
- `nothing`: an archive with nothing inside: no rows, no crash.

Zips are written byte for byte (fixed timestamps, hand-patched headers) so the output is stable;
`test_hostile.py` regenerates the corpus in memory and fails if the checked-in files differ.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import sys
import warnings
import zipfile
from pathlib import Path
from typing import Any

HOSTILE = Path(__file__).resolve().parent / "hostile"
EPOCH = (1980, 1, 1, 0, 0, 0)

# A process_result.py aggregate (agg_fixed_v1), shortened from a real InferenceX point.
AGG: dict[str, Any] = {
    "hw": "mi355x",
    "conc": 4,
    "image": "vllm/vllm-openai-rocm:v0.21.0",
    "model": "moonshotai/Kimi-K2.5",
    "infmax_model_prefix": "kimik2.5",
    "framework": "vllm",
    "precision": "int4",
    "spec_decoding": "mtp",
    "disagg": False,
    "isl": 1024,
    "osl": 1024,
    "is_multinode": False,
    "tp": 8,
    "ep": 1,
    "dp_attention": "false",
    "tput_per_gpu": 55.62670336516291,
    "output_tput_per_gpu": 27.678011491816765,
    "input_tput_per_gpu": 27.948691873346146,
    "mean_ttft": 0.3170863160688896,
    "median_ttft": 0.2969768075272441,
    "p99_ttft": 0.5859901384473777,
    "mean_tpot": 0.017294128568510713,
    "mean_intvty": 57.82309273569342,
    "median_tpot": 0.017393898241078155,
    "median_intvty": 57.49142521935413,
    "p99_tpot": 0.018459965544077445,
    "p99_intvty": 54.17128204341814,
    "mean_e2el": 16.17588243483915,
    "median_e2el": 16.2612041993998,
}

# A together_runner result (latencies in ms under `metrics`).
TOGETHER: dict[str, Any] = {
    "hw": "b200",
    "model": "nvidia/DeepSeek-R1-0528-FP4",
    "framework": "sglang",
    "precision": "fp4",
    "isl": 1024,
    "osl": 1024,
    "tp": 8,
    "ep": 8,
    "conc": 16,
    "metrics": {
        "successful_requests": 160,
        "total_token_throughput": 2152.187766232811,
        "output_token_throughput": 1068.153334224349,
        "median_ttft_ms": 349.64927029795945,
        "p99_ttft_ms": 2563.1852402957156,
        "median_tpot_ms": 13.299683519125873,
        "p99_tpot_ms": 14.836268313023332,
        "median_e2el_ms": 7276.908119674772,
    },
}

# An aiperf profile export (0.8 layout) cut down to the metrics a point needs.
AIPERF: dict[str, Any] = {
    "request_latency": {"unit": "ms", "avg": 9059.6, "p50": 9097.3, "p99": 9297.6},
    "time_to_first_token": {"unit": "ms", "avg": 2343.2, "p50": 2369.3, "p99": 3833.4},
    "inter_token_latency": {"unit": "ms", "avg": 27.7, "p50": 27.6, "p99": 33.7},
    "output_token_throughput": {"unit": "tokens/sec", "avg": 2320.7},
    "request_count": {"unit": "requests", "avg": 89.0},
}

XSS = {
    "model": "<script>alert('model')</script>",
    "framework": '<img src=x onerror="alert(1)">',
    "image": "\"><svg/onload=alert('image')>",
    "precision": "</title><script>alert(2)</script>",
}


def _agg(**changes: Any) -> dict[str, Any]:
    doc = dict(AGG)
    doc.update(changes)
    return doc


def _dump(doc: Any) -> bytes:
    return json.dumps(doc, indent=1).encode()


def _raw(text: str) -> bytes:
    return text.encode()


def _replace(key: str, literal: str, doc: dict[str, Any] | None = None) -> bytes:
    """The aggregate with one value written as a raw JSON literal (NaN, 1e400, ...)."""
    body = json.dumps(doc or AGG, indent=1)
    old = f'"{key}": {json.dumps((doc or AGG)[key])}'
    assert old in body, old
    return body.replace(old, f'"{key}": {literal}', 1).encode()


# ---- zips ------------------------------------------------------------------------------------


def _info(name: str, mode: int = 0o100644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, EPOCH)
    info.external_attr = mode << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _zip(members: list[tuple[str, bytes]], *, stored: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members:
            info = _info(name)
            if stored:
                info.compress_type = zipfile.ZIP_STORED
            zf.writestr(info, data)
    return buf.getvalue()


def _patch_central(raw: bytes, offset: int, value: bytes, *, local: int | None = None) -> bytes:
    """Overwrite a field of the first central-directory entry (and of its local header)."""
    out = bytearray(raw)
    cd = out.find(b"PK\x01\x02")
    out[cd + offset : cd + offset + len(value)] = value
    if local is not None:
        lh = out.find(b"PK\x03\x04")
        out[lh + local : lh + local + len(value)] = value
    return bytes(out)


def _symlink_zip(members: list[tuple[str, bytes, bool]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, link in members:
            info = _info(name, (0o120777 if link else 0o100644))
            info.compress_type = zipfile.ZIP_STORED
            zf.writestr(info, data)
    return buf.getvalue()


def _nested(depth: int) -> bytes:
    blob = _zip([("agg.json", _dump(AGG))])
    for level in range(depth):
        blob = _zip([(f"level{level}.zip", blob)], stored=True)
    return blob


def _duplicate_names() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(_info("agg.json"), _dump(AGG))
        # zipfile warns about the duplicate; that is the point of this file.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            zf.writestr(_info("agg.json"), _dump(_agg(tput_per_gpu=999.0)))
    return buf.getvalue()


def _bad_utf8_name() -> bytes:
    raw = _zip([("agg_X.json", _dump(AGG))])
    # Set the UTF-8 name flag and put an invalid byte in the name (central and local).
    out = bytearray(raw)
    for sig, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        pos = out.find(sig)
        out[pos + flag_at + 1] |= 0x08  # bit 11 of the flags: the name is UTF-8
        out[pos + name_at + 4] = 0xFF
    return bytes(out)


def _local_name_mismatch() -> bytes:
    raw = bytearray(_zip([("agg_a.json", _dump(AGG))]))
    lh = raw.find(b"PK\x03\x04")
    raw[lh + 30 + 4] = ord("b")
    return bytes(raw)


def _bad_crc() -> bytes:
    raw = _zip([("agg.json", _dump(AGG))], stored=True)
    out = bytearray(raw)
    data_at = out.find(b'"hw"')
    out[data_at + 1] = ord("H")
    return bytes(out)


def _corrupt_deflate() -> bytes:
    raw = bytearray(_zip([("agg.json", _dump(AGG) * 20)]))
    for i in range(60, 90):
        raw[i] ^= 0x5A
    return bytes(raw)


def _truncated_zip() -> bytes:
    raw = _zip([("agg.json", _dump(AGG)), ("b.json", _dump(TOGETHER))])
    return raw[: len(raw) // 2]


# ---- the corpus ------------------------------------------------------------------------------

Entry = tuple[bytes, dict[str, Any]]


def _rej(reason: str, field: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"outcome": "rejected", "reason": reason}
    if field is not None:
        out["field"] = field
    return out


def corpus() -> dict[str, Entry]:
    """File name -> (bytes, expectation)."""
    agg_text = json.dumps(AGG, indent=1)
    deep = 20_000
    c: dict[str, Entry] = {
        # -- truncated and empty
        "truncated_object.json": (agg_text[: len(agg_text) // 2].encode(), _rej("invalid JSON")),
        "truncated_in_string.json": (agg_text[:40].encode(), _rej("invalid JSON")),
        "truncated_after_colon.json": (b'{"hw": "mi355x", "conc":', _rej("invalid JSON")),
        "unclosed_deep.json": (b"[" * 10_000, _rej("JSON")),
        "empty.json": (b"", _rej("unrecognised file")),
        "whitespace_only.json": (b" \n\t\r\n  ", _rej("unrecognised file")),
        "nul_bytes.json": (b"\x00" * 256, _rej("unrecognised file")),
        # -- deeply nested
        "deep_arrays.json": (b"[" * deep + b"]" * deep, _rej("nested too deeply")),
        "deep_objects.json": (b'{"a":' * deep + b"1" + b"}" * deep, _rej("nested too deeply")),
        "deep_in_field.json": (
            agg_text[:-2].encode() + b',\n "extra": ' + b"[" * 5000 + b"]" * 5000 + b"\n}",
            _rej("nested too deeply"),
        ),
        # -- huge numbers
        "huge_int_throughput.json": (_replace("tput_per_gpu", "1" + "0" * 400), _rej("too large")),
        "huge_int_conc.json": (_replace("conc", "1" + "0" * 25), _rej("out of range")),
        "huge_int_tp.json": (_replace("tp", "9" * 30), _rej("out of range")),
        "too_many_digits.json": (_replace("tput_per_gpu", "7" * 5000), _rej("invalid JSON")),
        "huge_float_throughput.json": (_replace("tput_per_gpu", "1e400"), _rej("finite")),
        "huge_float_latency.json": (_replace("median_tpot", "-1e400"), _rej("finite")),
        "underflow_throughput.json": (_replace("tput_per_gpu", "1e-400"), _rej("positive")),
        # -- NaN and inf
        "nan_literal.json": (_replace("tput_per_gpu", "NaN"), _rej("NaN")),
        "infinity_literal.json": (_replace("median_ttft", "Infinity"), _rej("Infinity")),
        "neg_infinity_literal.json": (_replace("p99_tpot", "-Infinity"), _rej("Infinity")),
        "nan_string.json": (_dump(_agg(tput_per_gpu="NaN")), _rej("expected a number")),
        "inf_string_conc.json": (_dump(_agg(conc="inf")), _rej("integer")),
        # -- wrong units and wrong types
        "tpot_in_ms.json": (
            _dump(
                _agg(
                    mean_tpot=AGG["mean_tpot"] * 1000,
                    median_tpot=AGG["median_tpot"] * 1000,
                    p99_tpot=AGG["p99_tpot"] * 1000,
                )
            ),
            _rej("units"),
        ),
        "tpot_in_us_together.json": (
            _dump(
                {
                    **TOGETHER,
                    "metrics": {
                        **TOGETHER["metrics"],
                        "median_tpot_ms": TOGETHER["metrics"]["median_tpot_ms"] * 1000,
                        "p99_tpot_ms": TOGETHER["metrics"]["p99_tpot_ms"] * 1000,
                    },
                }
            ),
            {"outcome": "accepted", "note": "undetectable: TPOT is the only latency-rate"},
        ),
        "intvty_per_ms.json": (
            _dump(_agg(median_intvty=AGG["median_intvty"] / 1000, p99_intvty=0.054)),
            _rej("units", "median_tpot"),
        ),
        "negative_throughput.json": (_dump(_agg(tput_per_gpu=-55.6)), _rej("positive")),
        "negative_latency.json": (_dump(_agg(median_ttft=-0.3)), _rej("non-negative")),
        "conc_zero.json": (_dump(_agg(conc=0)), _rej("positive", "conc")),
        "conc_fraction.json": (_dump(_agg(conc=4.5)), _rej("integer")),
        "conc_word.json": (_dump(_agg(conc="four")), _rej("integer")),
        "tp_boolean.json": (_dump(_agg(tp=True)), _rej("bool", "tp")),
        "all_nulls.json": (_dump(dict.fromkeys(AGG)), _rej("")),
        "strings_everywhere.json": (
            _dump({k: str(v) if isinstance(v, int | float) else v for k, v in AGG.items()}),
            _rej("expected"),
        ),
        # -- duplicate keys
        "duplicate_key_top.json": (
            agg_text[:-2].encode() + b',\n "conc": 64\n}',
            _rej("duplicate key 'conc'"),
        ),
        "duplicate_key_nested.json": (
            json.dumps(TOGETHER)
            .replace('"median_tpot_ms":', '"median_tpot_ms": 1.0, "median_tpot_ms":', 1)
            .encode(),
            _rej("duplicate key 'median_tpot_ms'"),
        ),
        # -- encodings
        "bom.json": (b"\xef\xbb\xbf" + _dump(_agg(conc=5)), {"outcome": "accepted"}),
        "double_bom.json": (b"\xef\xbb\xbf\xef\xbb\xbf" + _dump(AGG), _rej("invalid JSON")),
        "utf16.json": (_dump(AGG).decode().encode("utf-16"), _rej("unrecognised file")),
        "latin1_model.json": (
            json.dumps(_agg(model="Kimi-K2.5-r\u00e9sum\u00e9"), ensure_ascii=False).encode(
                "latin-1"
            ),
            _rej("not UTF-8"),
        ),
        "lone_surrogate.json": (
            agg_text.replace('"moonshotai/Kimi-K2.5"', '"moonshotai/\\ud800Kimi"').encode(),
            _rej("surrogate", "model"),
        ),
        "control_chars.json": (
            _dump(_agg(conc=6, model="kimi\u0000\u001b[31m\u202eevil")),
            _rej("holds a control character (\\x00)", "model"),
        ),
        # -- mixed schemas and wrong shapes
        "mixed_schemas_array.json": (
            _dump([_agg(conc=8), TOGETHER, "a string", None, 42, {"x": 1}, [_agg(conc=9)], True]),
            {"outcome": "partial", "reason": "not a fixed-sequence"},
        ),
        "array_of_numbers.json": (b"[1, 2, 3]", _rej("unrecognised JSON document")),
        "empty_array.json": (b"[]", _rej("unrecognised JSON document")),
        "empty_object.json": (b"{}", _rej("unrecognised JSON document")),
        "top_level_string.json": (b'"hello"', _rej("unrecognised file")),
        "top_level_number.json": (b"42", _rej("unrecognised file")),
        "gzip_in_json.json": (gzip.compress(_dump(AGG), mtime=0), _rej("unrecognised file")),
        "zip_in_json.json": (_zip([("agg.json", _dump(AGG))]), _rej("unrecognised file")),
        # -- strings that must stay inert when displayed
        "xss_strings.json": (
            _dump(_agg(conc=7, **XSS)),
            {"outcome": "accepted", "literal": dict(XSS)},
        ),
        "long_model_name.json": (
            _dump(_agg(conc=10, model="M" * 100_000)),
            _rej("100000 characters, over the 4096 character limit", "model"),
        ),
        "model_name_at_the_limit.json": (
            _dump(_agg(conc=10, model="M" * 4096)),
            {"outcome": "accepted", "length": {"model": 4096}},
        ),
        # -- text formats with hostile contents
        "prometheus_hostile.txt": (
            _raw(
                "# HELP vllm:spec_decode_num_drafts drafts\n"
                "# TYPE vllm:spec_decode_num_drafts counter\n"
                'vllm:spec_decode_num_drafts_total{model_name="m"} NaN\n'
                "# TYPE vllm:spec_decode_num_accepted_tokens counter\n"
                'vllm:spec_decode_num_accepted_tokens_total{model_name="m"} +Inf\n'
                "vllm:garbage{{{ 1 2 3\n"
                'vllm:big{model_name="m"} 1e999999\n'
            ),
            {"outcome": "no_rows"},
        ),
        "server_log_binary.log": (
            b"INFO vLLM API server version 0.21.0\n\xff\xfe\x00garbage\x80\x81"
            b"SpecDecoding metrics: Draft acceptance rate: \xff%\n",
            _rej("not UTF-8"),
        ),
        "server_log_bad_numbers.log": (
            _raw(
                "INFO vLLM API server version 0.21.0\n"
                "INFO SpecDecoding metrics: Mean acceptance length: NaN, Accepted throughput: "
                "inf tokens/s, Drafted throughput: 1e999 tokens/s, Accepted: -5 tokens, "
                "Drafted: 99999999999999999999999999 tokens, Per-position acceptance rate: "
                "1.5, nan, -0.1, Avg Draft acceptance rate: 250.0%\n"
            ),
            {"outcome": "no_rows"},
        ),
        "vllm_command.txt": (
            _raw("vllm serve 'unbalanced --tensor-parallel-size=8 --max-num-seqs \"\n"),
            {"outcome": "no_rows"},
        ),
        "vllm_command_flags.txt": (
            _raw("vllm serve m " + " ".join(f"--tensor-parallel-size={i}" for i in range(500))),
            {"outcome": "no_rows"},
        ),
        "vllm_command_deep_json.txt": (
            _raw("vllm serve m --speculative-config " + "[" * 5000 + " --tensor-parallel-size 8\n"),
            {"outcome": "no_rows"},
        ),
        "deep_first_line_experiment-ledger.jsonl": (
            b"[" * 5000 + b"\n" + b'{"ok": 1}\n',
            {"outcome": "no_rows"},
        ),
        "experiment_summary.csv": (
            _raw(
                "exp_name,tp,bs,offload,num_requests,mean_ttft_ms\n"
                "x,8\n"
                ",,,,,,,,,,,,\n"
                "y,eight,16,on,NaN,1e999\n"
                '"unterminated,8,16,on,10,5\n'
            ),
            {"outcome": "no_rows"},
        ),
        "profile_export_aiperf.json": (
            _dump(
                {
                    "records": {
                        "request_latency": {"tag": "request_latency", "unit": "furlongs"},
                        "time_to_first_token": {"tag": "ttft", "unit": "ms", "avg": "NaN"},
                    },
                    "input_config": [1, 2, 3],
                }
            ),
            {"outcome": "no_rows"},
        ),
        # -- archives
        "zip_slip_dotdot.zip": (
            _zip([("agg.json", _dump(AGG)), ("../evil_dotdot.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_absolute.zip": (
            _zip([("/tmp/paretolens_hostile_zip_slip_absolute.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_backslash.zip": (
            _zip([("..\\..\\evil_backslash.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_drive.zip": (
            _zip([("C:\\evil_drive.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_unc.zip": (
            _zip([("\\\\server\\share\\evil_unc.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_deep.zip": (
            _zip([("a/b/../../../evil_deep.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_dir_entry.zip": (
            _zip([("../", b""), ("agg.json", _dump(AGG))]),
            _rej("escapes the extraction directory"),
        ),
        "zip_slip_nested.zip": (
            _zip(
                [
                    ("agg.json", _dump(_agg(conc=11))),
                    ("inner.zip", _zip([("../../evil_nested.json", _dump(AGG))])),
                ]
            ),
            {"outcome": "partial", "reason": "escapes the extraction directory"},
        ),
        "zip_symlink_file.zip": (
            _symlink_zip([("agg.json", b"/etc/passwd", True)]),
            _rej("symbolic link"),
        ),
        "zip_symlink_dir.zip": (
            _symlink_zip([("d", b"/tmp", True), ("d/evil_symlink_dir.json", _dump(AGG), False)]),
            _rej("symbolic link"),
        ),
        "zip_bomb.zip": (_zip([("zeros.json", b"0" * (20 * 1024 * 1024))]), _rej("zip bomb")),
        "zip_bomb_many_members.zip": (
            _zip([(f"z{i:02d}.json", b" " * 1_000_000) for i in range(48)]),
            _rej("zip bomb"),
        ),
        "zip_bomb_nested.zip": (
            _zip(
                [
                    (f"bomb{i}.zip", _zip([("zeros.json", b"0" * (20 * 1024 * 1024))]))
                    for i in range(4)
                ],
                stored=True,
            ),
            _rej("zip bomb"),
        ),
        "zip_declared_smaller_than_real.zip": (
            _patch_central(_zip([("agg.json", _dump(AGG))]), 24, struct.pack("<I", 10)),
            _rej("corrupt"),
        ),
        "zip_declared_size_over_limit.zip": (
            _patch_central(_zip([("agg.json", _dump(AGG))]), 24, struct.pack("<I", 0xFFFF0000)),
            _rej("over the"),
        ),
        "zip_declared_far_beyond_real.zip": (
            _patch_central(_zip([("agg.json", _dump(AGG))]), 24, struct.pack("<I", 1_500_000_000)),
            _rej("zip bomb"),
        ),
        "zip_declared_compressed_beyond_file.zip": (
            _patch_central(
                _zip([("agg.json", _dump(_agg(conc=14)))], stored=True),
                20,
                struct.pack("<I", 900_000_000),
            ),
            {"outcome": "accepted"},
        ),
        "zip_truncated.zip": (_truncated_zip(), _rej("not a readable zip")),
        "zip_garbage.zip": (b"PK\x03\x04" + bytes(range(256)) * 4, _rej("not a readable zip")),
        "zip_not_a_zip.zip": (_dump(AGG), _rej("not a readable zip")),
        "zip_empty.zip": (_zip([]), {"outcome": "nothing"}),
        "zip_encrypted.zip": (
            _patch_central(_zip([("agg.json", _dump(AGG))]), 8, bytes([0x01]), local=6),
            _rej("encrypted"),
        ),
        "zip_unsupported_method.zip": (
            _patch_central(_zip([("agg.json", _dump(AGG))]), 10, struct.pack("<H", 97), local=8),
            _rej("compression method"),
        ),
        "zip_bad_crc.zip": (_bad_crc(), _rej("corrupt")),
        "zip_local_name_mismatch.zip": (_local_name_mismatch(), _rej("corrupt")),
        "zip_bad_utf8_name.zip": (_bad_utf8_name(), _rej("not a readable zip")),
        "zip_long_dir_name.zip": (
            _zip([("d" * 300 + "/agg.json", _dump(AGG))]),
            _rej("cannot be extracted"),
        ),
        "zip_file_dir_collision.zip": (
            _zip([("a", b"x"), ("a/agg.json", _dump(AGG))]),
            _rej("cannot be extracted"),
        ),
        "zip_duplicate_members.zip": (_duplicate_names(), _rej("appears twice")),
        "zip_nested_too_deep.zip": (_nested(1000), _rej("nested more than")),
        "zip_corrupt_deflate.zip": (_corrupt_deflate(), _rej("corrupt")),
        "zip_xss_member_names.zip": (
            _zip([("<img src=x onerror=alert('path')>.json", _dump(_agg(conc=12)))]),
            {"outcome": "accepted"},
        ),
        "zip_aiperf_unit_deep_sibling.zip": (
            _zip(
                [
                    ("profile_export_aiperf.json", _dump(AIPERF)),
                    ("inputs.json", b"[" * 5000 + b"]" * 5000),
                ]
            ),
            {"outcome": "no_rows"},
        ),
        "zip_good_and_bad.zip": (
            _zip([("agg.json", _dump(_agg(conc=13))), ("broken.json", agg_text[:99].encode())]),
            {"outcome": "partial", "reason": "invalid JSON"},
        ),
    }
    return c


def write(target: Path = HOSTILE) -> int:
    """Write the corpus and its manifest; return the number of files."""
    files = corpus()
    target.mkdir(parents=True, exist_ok=True)
    for old in target.iterdir():
        if old.name not in files and old.name != "MANIFEST.json":
            old.unlink()
    for name, (data, _exp) in files.items():
        (target / name).write_bytes(data)
    manifest = {name: exp for name, (_d, exp) in sorted(files.items())}
    (target / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return len(files)


if __name__ == "__main__":
    n = write()
    print(f"wrote {n} hostile files to {HOSTILE}", file=sys.stderr)
