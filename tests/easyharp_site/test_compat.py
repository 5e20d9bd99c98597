"""One pin per use of another package's private API (`easyharp_site.compat`): each test
fails when the package changes what the project relies on."""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.cache.backends.redis import RedisCacheClient

from easyharp_site import compat


def test_uvicorn_sansio_protocol_has_the_state_the_frame_writer_reads() -> None:
    module_name, class_name = compat.UVICORN_PROTOCOL
    protocol_class = getattr(importlib.import_module(module_name), class_name)
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    async def made() -> Any:
        config = Config(app=lambda *_: None, ws="websockets-sansio")
        config.load()
        return protocol_class(config=config, server_state=ServerState(), app_state={})

    protocol = asyncio.run(made())
    writer = compat.frame_writer(protocol.send)
    assert isinstance(writer, compat.FrameWriter)
    # Before the handshake: not ready; its flags are the ones `ready` reads.
    assert (protocol.handshake_complete, protocol.close_sent, protocol.disconnected) == (
        False,
        False,
        False,
    )
    assert isinstance(protocol.writable, asyncio.Event) and protocol.writable.is_set()
    assert not writer.ready()


def test_another_servers_send_gets_no_frame_writer() -> None:
    async def send(message: dict[str, Any]) -> None:
        return None

    assert compat.frame_writer(send) is None


def test_djangos_redis_client_keeps_the_attributes_the_shared_pools_read() -> None:
    client: Any = RedisCacheClient(["redis://127.0.0.1:6379/15", "redis://127.0.0.1:6379/14"])
    assert callable(client._get_connection_pool)
    assert client._get_connection_pool_index(True) == 0
    assert client._servers[0] == "redis://127.0.0.1:6379/15"
    assert isinstance(client._pool_options, dict)
    assert hasattr(client._pool_class, "from_url")


def test_cache_objects_of_one_process_share_one_pool() -> None:
    first = compat.SharedPoolRedisCache("redis://127.0.0.1:6379/15", {})
    second = compat.SharedPoolRedisCache("redis://127.0.0.1:6379/15", {})
    assert first._cache is not second._cache
    assert first._cache._get_connection_pool(True) is second._cache._get_connection_pool(True)


def test_asgiref_keeps_the_servers_loop_for_its_threads() -> None:
    seen: list[Any] = []

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        await sync_to_async(lambda: seen.append((compat.server_loop(), loop)))()

    asyncio.run(serve())
    ((found, loop),) = seen
    assert found is loop
    assert compat.server_loop() is None  # outside a request's thread


def test_async_to_sync_from_a_requests_thread_runs_on_the_servers_loop() -> None:
    threads: list[str] = []

    async def on_loop() -> None:
        threads.append(threading.current_thread().name)

    async def serve() -> None:
        await sync_to_async(async_to_sync(on_loop))()

    asyncio.run(serve())
    assert threads == [threading.main_thread().name]


def test_daphne_request_takes_twisteds_form_parsing_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    from daphne.http_protocol import WebRequest
    from twisted.web.http import Request

    assert "parsePOSTFormSubmission" in inspect.signature(Request.__init__).parameters
    # daphne's own (a test before may have loaded daphne's server and the application).
    original = inspect.unwrap(WebRequest.__init__)
    monkeypatch.setattr(WebRequest, "__init__", original)
    monkeypatch.delitem(sys.modules, "daphne.server", raising=False)
    assert compat.daphne_without_form_parsing() is False
    assert WebRequest.__init__ is original

    import daphne.server  # noqa: F401  (a process serving through daphne has it loaded)

    assert compat.daphne_without_form_parsing() is True
    assert WebRequest.__init__ is not original
    assert compat.daphne_without_form_parsing() is True  # once only
