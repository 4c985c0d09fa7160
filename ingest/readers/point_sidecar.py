"""`paretolens_point.json`: the configuration the runner knew about a point, written beside its
results, so columns a result file cannot carry (hardware label, image, KV offload, model prefix)
reach the store. It only fills what the result file left empty."""

from __future__ import annotations

from typing import Any

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.base import ReadResult, SourceFile

_KEY = "paretolens_point"
# Provenance is the pipeline's to set; the runner's run id is the job's, given at ingest.
_NOT_ENRICHED = {Col.RUN_ID, Col.SOURCE_PATH, Col.SOURCE_SHA256, Col.ARTIFACT, Col.POINT_ID}


class PointSidecarReader:
    """Reads the runner's point sidecar into enrichment columns."""

    name = "paretolens_point"

    def sniff(self, src: SourceFile, doc: Any) -> bool:
        return isinstance(doc, dict) and set(doc) == {_KEY}

    def read(self, src: SourceFile, doc: Any) -> ReadResult:
        cols = doc[_KEY]
        if not isinstance(cols, dict):
            raise ParseError(
                src.rel, _KEY, f"expected an object of canonical columns, got {type(cols).__name__}"
            )
        enrich: dict[str, Any] = {}
        for key, value in cols.items():
            try:
                col = Col(key)
            except ValueError as exc:
                raise ParseError(
                    src.rel, f"{_KEY}.{key}", "not a canonical column (see docs/schema.md)"
                ) from exc
            if col not in _NOT_ENRICHED:
                enrich[col.value] = value
        return ReadResult(enrich=enrich)


FILE_READERS = (PointSidecarReader(),)
