"""Building the service from settings, and running it under uvicorn (one process or several).

With ``workers > 1`` uvicorn starts that many processes, each importing :func:`app_from_env`,
which rebuilds the service from the settings passed in ``RECALLWISE_SERVE_SETTINGS`` (JSON):
every worker has its own store connection, model and batcher, as separate replicas would.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import socket
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import InvalidIdError, RecallwiseError, UsageError
from ..records import validate_id
from ..stores.urls import redact_url
from .service import DEFAULT_NAMESPACES, Limits, MemoryService

__all__ = ["SETTINGS_ENV", "Settings", "app_from_env", "build_app", "build_service", "is_loopback", "run"]

SETTINGS_ENV = "RECALLWISE_SERVE_SETTINGS"


@dataclass
class Settings:
    """Everything ``recallwise serve`` is told (and a worker process needs to rebuild the app)."""

    store: str
    host: str = "127.0.0.1"
    port: int = 8080
    keys: str | None = None
    workers: int = 1
    decider: str = "embedded"
    decider_url: str | None = None
    embedder: str | None = None
    namespaces: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_NAMESPACES))
    limits: dict[str, Any] = field(default_factory=dict)
    max_batch: int = 16
    batch_embeddings: bool = True
    threads: int = 64
    log: str | None = None
    #: the decision log keeps message and memory text (``--log-content``; off: ids and numbers only)
    log_content: bool = False
    #: a turn is answered once its log row is committed (``--log-durable``)
    log_durable: bool = False
    #: logged turns older than this many days are deleted (``--log-retention-days``; None: kept)
    log_retention_days: float | None = None
    #: the name each logged turn carries of the replica that served it (``--replica-name``; None:
    #: this host's name and the port)
    replica_name: str | None = None
    access_log: bool = False
    #: the MCP server at /mcp (when the ``mcp`` extra is installed): most context tokens per recall
    mcp_token_budget: int | None = None
    #: the actor /mcp acts for without keys (with keys: each key's label)
    mcp_actor: str = "local"

    def replica(self) -> str:
        """The name the decision log gives this replica: ``--replica-name``, else host:port."""
        return self.replica_name or f"{socket.gethostname()}:{self.port}"

    def check(self) -> None:
        """Refuse, before anything starts, what would be unsafe or cannot work."""
        if self.keys is None and not is_loopback(self.host):
            raise UsageError(
                f"--host {self.host}: refusing to serve a non-loopback address without --keys FILE "
                "(anyone who can reach it could read and delete every memory); make keys with "
                "`recallwise keys new --keys FILE --tenant NAME`"
            )
        if not 0 <= self.port <= 65535:
            raise UsageError(f"--port {self.port}: not a TCP port")
        if self.workers < 1:
            raise UsageError(f"--workers {self.workers}: at least 1")
        if self.mcp_token_budget is not None and self.mcp_token_budget < 1:
            raise UsageError(f"--mcp-token-budget {self.mcp_token_budget}: at least 1")
        try:
            validate_id(self.mcp_actor, "--mcp-actor")
        except InvalidIdError as exc:
            raise UsageError(str(exc)) from None
        if self.replica_name is not None and not (
            0 < len(self.replica_name) <= 200 and self.replica_name.isprintable()
        ):
            raise UsageError(f"--replica-name {self.replica_name!r}: 1-200 printable characters")
        if self.log_content and not self.log:
            raise UsageError("--log-content: give --log FILE too (the log it adds the content to)")
        if self.log_durable and not self.log:
            raise UsageError("--log-durable: give --log FILE too")
        if self.log_retention_days is not None:
            if not self.log:
                raise UsageError("--log-retention-days: give --log FILE too")
            if not self.log_retention_days > 0:
                raise UsageError(f"--log-retention-days {self.log_retention_days:g}: above 0")
        if self.max_batch < 1:
            raise UsageError(f"--max-batch {self.max_batch}: at least 1")
        try:
            Limits(**self.limits)
        except TypeError as exc:
            raise UsageError(f"unknown limit: {exc}") from None
        for name, value in self.limits.items():
            if value < 1:
                raise UsageError(f"--{name.replace('_', '-')} {value}: at least 1")


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _open_store(settings: Settings) -> Any:
    """The store ``--store`` names, with the embedder ``--embedder`` names (the store's own default
    without one)."""
    from ..embeddings import make_embedder
    from ..stores import open_store

    return open_store(
        settings.store, embedder=make_embedder(settings.embedder) if settings.embedder else None
    )


def build_service(settings: Settings) -> MemoryService:
    os.environ.setdefault("RECALLWISE_ONNX_SPIN", "0")  # before the embedder loads: see onnx_minilm
    from ..deciders import from_spec
    from ..policy.log import DecisionLog

    store = _open_store(settings)
    try:
        service = MemoryService.open(
            store,
            decider=from_spec(settings.decider, settings.decider_url),
            namespaces=settings.namespaces,
            limits=Limits(**settings.limits),
            batch_embeddings=settings.batch_embeddings,
            max_batch=settings.max_batch,
            log=DecisionLog(
                settings.log,
                content=settings.log_content,
                durable=settings.log_durable,
                retention_days=settings.log_retention_days,
                replica=settings.replica(),
            )
            if settings.log
            else None,
        )
        service.policy.warm_up()
    except BaseException:
        store.close()
        raise
    return service


def build_app(settings: Settings) -> Any:
    from .app import create_app
    from .auth import Keyring

    keyring = Keyring.load(settings.keys) if settings.keys else None
    service = build_service(settings)
    app = create_app(service, keyring, threads=settings.threads, bound_host=settings.host)
    _mount_mcp(app, service, keyring, settings.mcp_token_budget, settings.mcp_actor)
    return app


def _mount_mcp(app: Any, service: MemoryService, keyring: Any, token_budget: int | None, actor: str) -> None:
    """The MCP server at /mcp, behind the same keys, when the ``mcp`` extra is installed."""
    try:
        from .mcp import DEFAULT_TOKEN_BUDGET, mount_mcp
    except ModuleNotFoundError as exc:  # the SDK is not installed: no /mcp
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        return
    budget = DEFAULT_TOKEN_BUDGET if token_budget is None else token_budget
    mount_mcp(app, service, keyring, actor_id=actor, token_budget=budget)


def log_config(access_log: bool) -> dict[str, Any]:
    """uvicorn's logging: warnings and errors only, and with ``--access-log`` one line per
    request (uvicorn's access logger at info) on stderr, where stdout holds ``--json``'s object.

    Levels are set here, not with uvicorn's ``log_level``, which would set the access logger's too.
    """
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["uvicorn"]["level"] = "WARNING"
    config["loggers"]["uvicorn.error"]["level"] = "WARNING"
    config["loggers"]["uvicorn.access"]["level"] = "INFO" if access_log else "WARNING"
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return config


def app_from_env() -> Any:
    """The app of one worker process (uvicorn's factory with ``--workers N``); a worker that cannot
    build it (the database went away since start-up) says why in one line and exits."""
    try:
        return build_app(Settings(**json.loads(os.environ[SETTINGS_ENV])))
    except RecallwiseError as exc:
        sys.stderr.write(f"recallwise serve: worker {os.getpid()}: {exc}\n")
        raise SystemExit(1) from None


def _check_store(settings: Settings) -> None:
    """Open and close the store once before starting workers: a wrong URL or a database that is
    down is then one line and an exit, not a traceback from every worker."""
    _open_store(settings).close()


def run(settings: Settings, *, on_ready: Any = None) -> None:
    """Serve until SIGINT / SIGTERM (in-flight requests drain, up to 30 s)."""
    import uvicorn

    settings.check()
    if settings.keys:
        from .auth import Keyring

        keys = len(Keyring.load(settings.keys))  # a bad file fails here, before models load
        access = f"{keys} API key(s) from {settings.keys}"
    else:
        access = "no keys: loopback only, one local user"
    common: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_config": log_config(settings.access_log),
        "access_log": settings.access_log,
        "timeout_graceful_shutdown": 30,
        "server_header": False,
    }
    if settings.workers > 1:
        _check_store(settings)
    app = None if settings.workers > 1 else build_app(settings)
    where = f"http://{settings.host}:{settings.port}"
    store = redact_url(settings.store)
    sys.stderr.write(f"recallwise serve: {where} over {store} ({access}; {settings.workers} worker(s))\n")
    if on_ready is not None:
        on_ready(where, access)
    if app is None:
        os.environ[SETTINGS_ENV] = json.dumps(asdict(settings))
        uvicorn.run("recallwise.serve.runner:app_from_env", factory=True, workers=settings.workers, **common)
    else:
        uvicorn.Server(uvicorn.Config(app, **common)).run()
