"""Request parsers that refuse hostile JSON with a 400 instead of crashing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, plus a clear 400 for JSON nested too deeply to decode.

    Python's decoder raises `RecursionError` (not `ValueError`) on a document like
    `[[[[...]]]]` nested tens of thousands deep; DRF's parser lets that escape as
    a 500. No request of this API nests more than a few levels.
    """

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
