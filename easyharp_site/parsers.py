"""Request parsers that refuse hostile JSON with a 400 instead of crashing."""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# A `\u` escape of a UTF-16 surrogate: the only way one reaches a decoded string
# (surrogates written as UTF-8 bytes are not UTF-8, which the decoder refuses).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

LONE_SURROGATE = "JSON parse error - a string holds a lone surrogate (\\ud800 to \\udfff)."


def has_lone_surrogate(data: Any) -> bool:
    """Whether decoded JSON holds a string (a key or a value) with a lone UTF-16 surrogate.

    Python's decoder accepts `"\\ud800"` and hands back a string no encoder can
    write: hashing it, storing it or logging it raises `UnicodeEncodeError` far
    from the request that sent it. Walked with a list, not by recursion: JSON as
    deep as the decoder takes is checked whatever the caller's own depth.
    """
    waiting = [data]
    while waiting:
        item = waiting.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            waiting.extend(item.keys())
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
    return False


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, plus a clear 400 for JSON nested too deeply to decode and for
    strings with a lone surrogate.

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
        # The body is capped (easyharp_site.middleware): reading it whole is safe.
        body = stream.read() if stream is not None else b""
        try:
            data = super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
        # A UTF-8 body without a surrogate escape is not read again (a log is long).
        encoding = (parser_context or {}).get("encoding") or settings.DEFAULT_CHARSET
        escaped = codecs.lookup(encoding).name != "utf-8" or _SURROGATE_ESCAPE.search(body)
        if escaped and has_lone_surrogate(data):
            raise ParseError(LONE_SURROGATE)
        return data
