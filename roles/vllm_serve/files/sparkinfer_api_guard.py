# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The API key on every route of vLLM's API server, not only on the prefixes vLLM guards itself.

vLLM checks --api-key / VLLM_API_KEY on /v1, /v2, /inference and /cohere only: /invocations (the same
inference as /v1), /tokenize, /metrics, /version, /load ... answer anyone. This ASGI middleware, which
the vllm_serve role mounts into the container and names with ``--middleware
sparkinfer_api_guard.GuardEveryRoute``, answers 401 to any request without ``Authorization: Bearer
<VLLM_API_KEY>``, except a CORS preflight and the exact paths listed in SPARKINFER_API_OPEN_PATHS
(comma-separated, such as /health for a load balancer's probe). With no key in the environment it
refuses every request to a guarded path: it fails closed.

A CORS preflight is an OPTIONS request with both an ``Origin`` and an ``Access-Control-Request-Method``
header: a browser sends it without credentials, so it must pass. It never reaches a route: vLLM adds
Starlette's CORSMiddleware before any --middleware (vllm/entrypoints/serve/middleware/register.py), so
it sits inside this guard and answers every preflight itself, by vLLM's --allowed-origins,
--allowed-methods and --allowed-headers (vLLM 0.32 allows no origin unless told: 400 "Disallowed CORS
origin"). Any other OPTIONS request goes to the route like a GET
would (vLLM 0.32 answers ``OPTIONS /metrics`` with every metric), so it needs the key.

Runs inside vLLM's container, on the image's Python: standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import os

_UNAUTHORIZED = b'{"error": "Unauthorized"}'


class GuardEveryRoute:
    """ASGI middleware: every path but the open ones needs the API key as a bearer token."""

    def __init__(self, app):
        self.app = app
        key = os.environ.get("VLLM_API_KEY", "")
        self._key_digest = hashlib.sha256(key.encode("utf-8")).digest() if key else None
        self._open_paths = frozenset(path for path in os.environ.get("SPARKINFER_API_OPEN_PATHS", "").split(",") if path)

    @staticmethod
    def _is_cors_preflight(scope):
        if scope.get("method") != "OPTIONS":
            return False
        names = {name.lower() for name, _value in scope.get("headers", ())}
        return b"origin" in names and b"access-control-request-method" in names

    def _authorized(self, scope):
        if self._key_digest is None:
            return False
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                scheme, _space, token = value.decode("latin-1").partition(" ")
                # Digests of equal length, compared in constant time, as vLLM's own check does.
                given = hashlib.sha256(token.encode("utf-8")).digest()
                return scheme.lower() == "bearer" and hmac.compare_digest(given, self._key_digest)
        return False

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket") and not self._is_cors_preflight(scope):
            root_path = scope.get("root_path", "")
            path = scope["path"][len(root_path) :] if root_path and scope["path"].startswith(root_path) else scope["path"]
            if path not in self._open_paths and not self._authorized(scope):
                if scope["type"] == "websocket":
                    # Policy violation, before the handshake is accepted.
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(_UNAUTHORIZED)).encode("ascii"))],
                    }
                )
                await send({"type": "http.response.body", "body": _UNAUTHORIZED})
                return
        await self.app(scope, receive, send)
