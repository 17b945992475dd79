"""The API guard middleware (roles/vllm_serve/files/sparkinfer_api_guard.py) on ASGI scopes as uvicorn builds them."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

GUARD_FILE = Path(__file__).resolve().parents[2] / "roles" / "vllm_serve" / "files" / "sparkinfer_api_guard.py"
KEY = "sk-0123456789"


def load_guard(monkeypatch, key: str | None, open_paths: str = "/health"):
    if key is None:
        monkeypatch.delenv("VLLM_API_KEY", raising=False)
    else:
        monkeypatch.setenv("VLLM_API_KEY", key)
    monkeypatch.setenv("SPARKINFER_API_OPEN_PATHS", open_paths)
    spec = importlib.util.spec_from_file_location("sparkinfer_api_guard", GUARD_FILE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GuardEveryRoute


def request(guard_class, path: str, headers: tuple[tuple[bytes, bytes], ...] = (), *, method: str = "GET", kind: str = "http", root_path: str = ""):
    """What the guarded app answered: ("app", None) when the request reached vLLM, else the guard's messages."""
    reached: list[Any] = []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": kind, "path": path, "root_path": root_path, "headers": list(headers)}
    if kind == "http":
        scope["method"] = method
    asyncio.run(guard_class(app)(scope, receive, send))
    return ("app", None) if reached else ("guard", sent)


def bearer(token: str) -> tuple[tuple[bytes, bytes], ...]:
    return ((b"authorization", f"Bearer {token}".encode()),)


@pytest.mark.parametrize("path", ["/tokenize", "/invocations", "/metrics", "/version", "/v1/models", "/load", "/health/extra"])
def test_a_request_without_the_key_is_refused_with_401(monkeypatch, path):
    outcome, sent = request(load_guard(monkeypatch, KEY), path)
    assert outcome == "guard"
    assert sent[0]["status"] == 401
    assert sent[1]["body"] == b'{"error": "Unauthorized"}'


@pytest.mark.parametrize("headers", [bearer("sk-wrong"), ((b"authorization", KEY.encode()),), ((b"authorization", f"Basic {KEY}".encode()),)])
def test_a_wrong_key_or_scheme_is_refused(monkeypatch, headers):
    assert request(load_guard(monkeypatch, KEY), "/tokenize", headers)[0] == "guard"


def test_the_key_opens_every_route(monkeypatch):
    guard = load_guard(monkeypatch, KEY)
    for path in ("/tokenize", "/invocations", "/v1/chat/completions"):
        assert request(guard, path, bearer(KEY)) == ("app", None)
    assert request(guard, "/tokenize", ((b"Authorization", f"bearer {KEY}".encode()),)) == ("app", None)


def test_open_paths_and_a_cors_preflight_pass_without_the_key(monkeypatch):
    guard = load_guard(monkeypatch, KEY, "/health,/ping")
    assert request(guard, "/health") == ("app", None)
    assert request(guard, "/ping") == ("app", None)
    preflight = ((b"Origin", b"https://app.example"), (b"Access-Control-Request-Method", b"POST"))
    assert request(guard, "/tokenize", preflight, method="OPTIONS") == ("app", None)


@pytest.mark.parametrize(
    "headers",
    [(), ((b"origin", b"https://app.example"),), ((b"access-control-request-method", b"GET"),)],
    ids=["bare", "origin-only", "request-method-only"],
)
def test_an_options_request_that_is_not_a_cors_preflight_needs_the_key(monkeypatch, headers):
    # vLLM 0.32 in the lab answered OPTIONS /metrics with every metric: OPTIONS reaches the route like GET.
    guard = load_guard(monkeypatch, KEY)
    outcome, sent = request(guard, "/metrics", headers, method="OPTIONS")
    assert (outcome, sent[0]["status"]) == ("guard", 401)
    assert request(guard, "/metrics", (*headers, *bearer(KEY)), method="OPTIONS") == ("app", None)


def test_a_preflight_header_on_another_method_does_not_open_it(monkeypatch):
    headers = ((b"origin", b"https://app.example"), (b"access-control-request-method", b"GET"))
    assert request(load_guard(monkeypatch, KEY), "/metrics", headers, method="GET")[0] == "guard"


def test_the_open_path_is_compared_below_the_root_path(monkeypatch):
    guard = load_guard(monkeypatch, KEY)
    assert request(guard, "/api/health", root_path="/api") == ("app", None)
    assert request(guard, "/api/tokenize", root_path="/api")[0] == "guard"


def test_without_a_key_every_guarded_path_is_refused(monkeypatch):
    guard = load_guard(monkeypatch, None)
    assert request(guard, "/tokenize", bearer(""))[0] == "guard"
    assert request(guard, "/health") == ("app", None)


def test_a_websocket_without_the_key_is_closed_before_the_handshake(monkeypatch):
    outcome, sent = request(load_guard(monkeypatch, KEY), "/v1/realtime", kind="websocket")
    assert (outcome, sent) == ("guard", [{"type": "websocket.close", "code": 1008}])


def test_lifespan_events_pass(monkeypatch):
    assert request(load_guard(monkeypatch, KEY), "", kind="lifespan") == ("app", None)
