"""PostgreSQL-specific behaviour, against a real server (see tests/pg_server.py).

Migrations (twice, and from several workers at once), the size-based plan choice and its
recall against exact search, binary COPY ingest, and the errors a user meets first: a wrong
password, an unreachable host, a database without pgvector.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pytest

from recallwise import MemoryRecord, StoreError, UsageError
from recallwise.bench.store import SyntheticCorpus
from recallwise.cli import main
from recallwise.embeddings import HashingEmbedder
from recallwise.errors import DimensionMismatchError
from recallwise.stores.base import SearchRequest

psycopg = pytest.importorskip("psycopg")
postgres = pytest.importorskip("recallwise.stores.postgres")
PostgresStore = postgres.PostgresStore

R = MemoryRecord


def _admin(url: str):
    return psycopg.connect(url, autocommit=True)


@pytest.fixture
def schema(pg_url):
    name = f"pgtest_{uuid.uuid4().hex[:12]}"
    yield name
    with _admin(pg_url) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _open(url: str, schema: str, dimension: int = 32, **options) -> PostgresStore:
    return PostgresStore(url, embedder=HashingEmbedder(dimension), schema=schema, **options)


def _versions(url: str, schema: str) -> list[tuple[int, str]]:
    with _admin(url) as conn:
        return conn.execute(
            f'SELECT version, description FROM "{schema}".schema_version ORDER BY 1'
        ).fetchall()


# ---- migrations ----------------------------------------------------------------------------


def test_migrations_are_recorded_once_and_reopening_changes_nothing(pg_url, schema):
    with _open(pg_url, schema) as store:
        store.add_records([R(actor_id="a", namespace="/n", text="kept across reopen")])
    expected = [(m.version, m.description) for m in postgres.MIGRATIONS]
    assert _versions(pg_url, schema) == expected
    with _open(pg_url, schema) as again:
        assert [r.text for r in again.list_records()] == ["kept across reopen"]
    assert _versions(pg_url, schema) == expected
    with _admin(pg_url) as conn:
        indexes = {
            row[0]
            for row in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,))
        }
        dim, half = (
            conn.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attname = %s",
                (f'"{schema}".records', column),
            ).fetchone()[0]
            for column in ("embedding", "embedding_half")
        )
        namespace_index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'records_namespace_actor'",
            (schema,),
        ).fetchone()[0]
    assert {
        "records_actor_namespace",
        "records_namespace_actor",
        "records_embedding_hnsw",
        "records_fts",
        "events_actor_session",
    } <= indexes
    assert dim.endswith("vector(32)") and half.endswith("halfvec(32)")
    assert namespace_index.endswith("INCLUDE (id, embedding_half)")


@pytest.mark.parametrize("old_version", [1, 2])
def test_an_older_schema_is_upgraded_in_place(pg_url, schema, monkeypatch, old_version):
    corpus = SyntheticCorpus(1200, 3, dimension=48, seed=4)
    with monkeypatch.context() as patch:
        patch.setattr(postgres.migrations, "MIGRATIONS", postgres.MIGRATIONS[:old_version])
        with _open(pg_url, schema, 48) as old:
            _load(old, corpus)
            (record,) = old.add_records([R(actor_id="a", namespace="/n", text="written before")])
    assert [v for v, _ in _versions(pg_url, schema)] == list(range(1, old_version + 1))
    with _open(pg_url, schema, 48) as store:
        assert [v for v, _ in _versions(pg_url, schema)] == [m.version for m in postgres.MIGRATIONS]
        assert [h.record.id for h in store.search(SearchRequest("/n", record.embedding, 5))] == [record.id]
        for ns, query in corpus.queries(10):
            hits = store.search(SearchRequest(corpus.namespace(ns), query, 10, extensions={"plan": "exact"}))
            assert {h.record.id for h in hits} == set(corpus.exact_top(ns, query, 10))
        # The rows written before carry their half-precision copy, the exact scan reads it from
        # the rebuilt namespace index alone, and the upgrade vacuumed the rewritten table.
        plan = store.explain(corpus.namespace(0), corpus.vectors[0], plan="exact")
        assert "Index Only Scan using records_namespace_actor" in plan and "Heap Fetches: 0" in plan
        with _admin(pg_url) as conn:
            assert (
                conn.execute(
                    f'SELECT count(*) FROM "{schema}".records WHERE embedding_half IS NULL '
                    "OR embedding::halfvec <> embedding_half"
                ).fetchone()[0]
                == 0
            )


def test_workers_starting_together_migrate_exactly_once(pg_url, schema):
    count = 6
    start = threading.Barrier(count)
    stores: list = []
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            start.wait()
            stores.append(_open(pg_url, schema, pool_size=1))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert not errors, errors
        assert len(stores) == count
        assert [v for v, _ in _versions(pg_url, schema)] == [m.version for m in postgres.MIGRATIONS]
        stores[0].add_records([R(actor_id="a", namespace="/n", text="x")])
        assert stores[-1].count_records() == 1
    finally:
        for store in stores:
            store.close()


def test_schema_from_url_and_password_never_shown(pg_url, schema):
    url = f"{pg_url}?schema={schema}"
    with PostgresStore(url, embedder=HashingEmbedder(8)) as store:
        assert store.schema == schema
        password = urlsplit(pg_url).password
        assert password and password not in store.url and password not in repr(store)
        assert ":***@" in store.url


def test_different_embedder_same_dimension_is_refused(pg_url, schema):
    _open(pg_url, schema, 16).close()

    class Other(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__(16)
            self.name = "other-16"

    with pytest.raises(DimensionMismatchError, match="hashing-16"):
        PostgresStore(pg_url, embedder=Other(), schema=schema)


# ---- plan choice and recall -------------------------------------------------------------------


def _load(store: PostgresStore, corpus: SyntheticCorpus) -> None:
    for batch in corpus.batches(2000):
        store.add_records(batch)


def test_plan_follows_namespace_size_and_share(pg_url, schema):
    corpus = SyntheticCorpus(3000, 6, dimension=48, seed=1)  # 500 records per namespace
    with _open(pg_url, schema, 48, exact_scan_limit=200, exact_scan_max=1000, hnsw_min_share=0.1) as store:
        _load(store, corpus)
        store.add_records([R(actor_id="s", namespace="/small", text=f"small {i}") for i in range(50)])
        store.add_records([R(actor_id="m", namespace="/thin", text=f"thin {i}") for i in range(250)])
        store.add_records([R(actor_id="h", namespace="/huge", text=f"huge {i}") for i in range(1100)])
        # the table's size is the planner's estimate: analyze it now, or an autovacuum that ran
        # after the first batch (2,000 rows) leaves /thin at 12% of "the table" (a flaky "hnsw")
        with _admin(pg_url) as conn:
            conn.execute(f'ANALYZE "{schema}".records')
        assert store.plan_for("/small") == "exact"  # 50 <= 200
        assert store.plan_for(corpus.namespace(0)) == "hnsw"  # 500 of 4400: 11%
        assert store.plan_for("/thin") == "exact"  # 250 of 4400: 6%, HNSW would filter too much
        assert store.plan_for("/huge") == "hnsw"  # over exact_scan_max
        small_plan = store.explain("/small", "small 3")
        big_plan = store.explain(corpus.namespace(0), corpus.vectors[0])
        assert "records_embedding_hnsw" not in small_plan and "records_namespace_actor" in small_plan
        assert "records_embedding_hnsw" in big_plan


def test_both_plans_find_the_exact_top_10(pg_url, schema):
    corpus = SyntheticCorpus(3000, 6, dimension=48, seed=1)
    with _open(pg_url, schema, 48) as store:
        _load(store, corpus)
        recalls: dict[str, list[float]] = {"exact": [], "hnsw": []}
        by_id = {corpus.record_id(i): i for i in range(corpus.n)}
        for ns, query in corpus.queries(40):
            truth = corpus.exact_top(ns, query, 10)
            for plan in ("exact", "hnsw"):
                hits = store.search(SearchRequest(corpus.namespace(ns), query, 10, extensions={"plan": plan}))
                assert len(hits) == 10
                assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
                recalls[plan].append(len({h.record.id for h in hits} & set(truth)) / 10)
                # Scores (and so the order) come from full-precision distances, not the
                # half-precision ones the exact scan ranks its candidates by.
                cosines = np.array([corpus.vectors[by_id[h.record.id]] @ query for h in hits])
                assert np.allclose([h.score for h in hits], (1 + cosines) / 2, atol=1e-5)
            by_actor = store.search(
                SearchRequest(
                    corpus.namespace(ns), query, 10, actor_id=corpus.actor(ns), extensions={"plan": "hnsw"}
                )
            )
            assert [h.record.id for h in by_actor] == [h.record.id for h in hits]
            assert (
                store.search(
                    SearchRequest(
                        corpus.namespace(ns), query, 10, actor_id="nobody", extensions={"plan": "hnsw"}
                    )
                )
                == []
            )
        assert np.mean(recalls["exact"]) == 1.0
        assert np.mean(recalls["hnsw"]) >= 0.97


def test_the_widest_covered_vectors_fit_the_namespace_index(pg_url, schema):
    # The namespace B-tree carries half-precision vectors up to COVERING_MAX_DIMENSION
    # dimensions; a B-tree entry holds at most ~2,700 bytes, keys included.
    dimension = postgres.COVERING_MAX_DIMENSION
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((60, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    namespace, actor = "/" + "n" * 99, "a" * 100
    records = [
        R(actor_id=actor, namespace=namespace, text=f"wide {i}", embedding=vectors[i]) for i in range(60)
    ]
    with _open(pg_url, schema, dimension) as store:
        store.add_records(records)
        hits = store.search(SearchRequest(namespace, vectors[7], 5, extensions={"plan": "exact"}))
        assert hits[0].record.id == records[7].id
        assert [h.record.id for h in hits[1:]] == [
            records[i].id for i in np.argsort(-(vectors @ vectors[7]), kind="stable")[1:5]
        ]
        assert "Index Only Scan using records_namespace_actor" in store.explain(namespace, vectors[7])


def test_naive_filtered_hnsw_is_the_trap_the_store_avoids(pg_url, schema):
    # What a plain `WHERE namespace = ... ORDER BY embedding <=> q LIMIT 10` does without
    # iterative scans: the index's 40 nearest rows of the whole table, then the filter.
    corpus = SyntheticCorpus(3000, 30, dimension=48, seed=2)  # 100 records per namespace
    with _open(pg_url, schema, 48, exact_scan_limit=50) as store:
        _load(store, corpus)
        with _admin(pg_url) as conn:
            from pgvector.psycopg import register_vector

            register_vector(conn)
            conn.execute(f'SET search_path = "{schema}", public')
            conn.execute("SET hnsw.iterative_scan = off")
            conn.execute("SET enable_sort = off")  # make the planner take the HNSW index
            naive, ours = [], []
            for ns, query in corpus.queries(20):
                rows = conn.execute(
                    "SELECT id FROM records WHERE namespace = %s ORDER BY embedding <=> %s LIMIT 10",
                    (corpus.namespace(ns), query),
                ).fetchall()
                naive.append(len(rows))
                ours.append(
                    len(
                        store.search(
                            SearchRequest(corpus.namespace(ns), query, 10, extensions={"plan": "hnsw"})
                        )
                    )
                )
        assert np.mean(naive) < 5  # the trap is real on this data
        assert ours == [10] * 20


# ---- ingest ----------------------------------------------------------------------------------


def test_copy_ingest_round_trips_exactly(pg_url, schema):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((3000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [
        R(
            actor_id=f"actor{i % 3}",
            namespace=f"/ns/{i % 5}",
            text=f"record {i} with 'quotes', tabs\t, newlines\n and ünïcødé",
            metadata={"i": i, "nested": {"list": [1, 2.5, None]}, "s": 'é\\"'},
            strategy="summary" if i % 2 else "semantic",
            created_at=1_700_000_000.25 + i,
            embedding=vectors[i],
        )
        for i in range(3000)
    ]
    with _open(pg_url, schema) as store:
        store.add_records(records)  # one COPY, one transaction
        assert store.count_records() == 3000
        back = store.get_records([r.id for r in records[::97]])
        for original in records[::97]:
            got = back[original.id]
            assert np.array_equal(got.embedding, original.embedding)
            assert (got.text, got.metadata, got.strategy, got.created_at) == (
                original.text,
                original.metadata,
                original.strategy,
                original.created_at,
            )
        assert [r.id for r in store.list_records("/ns/2")] == [
            r.id for r in records if r.namespace == "/ns/2"
        ]


def test_bulk_ingest_rebuilds_the_index_and_is_all_or_nothing(pg_url, schema):
    corpus = SyntheticCorpus(2000, 4, dimension=32, seed=3)
    with _open(pg_url, schema) as store:
        assert store.bulk_ingest(corpus.batches(500)) == 2000
        with _admin(pg_url) as conn:
            assert conn.execute(
                "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = 'records_embedding_hnsw'",
                (schema,),
            ).fetchone()
        ns, query = corpus.queries(1)[0]
        assert [
            h.record.id
            for h in store.search(SearchRequest(corpus.namespace(ns), query, 10, extensions={"plan": "hnsw"}))
        ] == (corpus.exact_top(ns, query, 10))

        bad = [R(actor_id="a", namespace="/late", text="wrong size", embedding=np.ones(3, dtype=np.float32))]
        good = [R(actor_id="a", namespace="/late", text="fine")]
        with pytest.raises(DimensionMismatchError):
            store.bulk_ingest([good, bad])
        assert store.count_records() == 2000
        assert store.list_records("/late") == []
        assert store.plan_for(corpus.namespace(0)) == "exact"  # 500 records: under the limit
        with _admin(pg_url) as conn:
            assert conn.execute(
                "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = 'records_embedding_hnsw'",
                (schema,),
            ).fetchone()


def test_duplicate_event_id_is_a_store_error(pg_url, schema):
    from recallwise import Event

    with _open(pg_url, schema) as store:
        event = store.create_event(Event(actor_id="a", session_id="s", role="user", text="hi"))
        with pytest.raises(StoreError, match=event.id):
            store.create_event(event)


# ---- errors a user meets first ----------------------------------------------------------------


def _with(
    url: str,
    *,
    password: str | None = None,
    port: int | None = None,
    host: str | None = None,
    database: str | None = None,
) -> str:
    parts = urlsplit(url)
    user = parts.username or "postgres"
    pw = parts.password if password is None else password
    netloc = f"{user}:{pw}@" if pw else f"{user}@"
    netloc += f"{host or parts.hostname}:{port or parts.port}"
    return urlunsplit((parts.scheme, netloc, f"/{database}" if database else parts.path, "", ""))


def test_wrong_password_is_one_clear_error(pg_url):
    with _admin(pg_url) as conn:
        method = conn.execute("SHOW password_encryption").fetchone()[0]
    assert method  # a server with password auth over TCP (the fixture's is scram-sha-256)
    with pytest.raises(StoreError, match="wrong user name or password") as info:
        PostgresStore(_with(pg_url, password="not-the-password"), embedder=HashingEmbedder(8))
    assert "not-the-password" not in str(info.value)


def test_closed_port_is_one_clear_error(pg_url):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket closes
    with pytest.raises(StoreError, match="server unreachable"):
        PostgresStore(_with(pg_url, host="127.0.0.1", port=port), embedder=HashingEmbedder(8))


def test_unreachable_host_fails_within_the_connect_timeout(pg_url):
    # 10.255.255.1 is a private address nobody answers on: the connection either fails at once
    # (no route) or waits for the timeout. Either way one StoreError, and no hang: the bound is
    # the timeout plus slack, checking the timeout is applied rather than measuring speed.
    started = time.monotonic()
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore(
            _with(pg_url, host="10.255.255.1", port=5432), embedder=HashingEmbedder(8), connect_timeout=2
        )
    assert time.monotonic() - started < 20


def test_missing_database_is_named(pg_url):
    with pytest.raises(StoreError, match="no such database"):
        PostgresStore(_with(pg_url, database="no_such_db_here"), embedder=HashingEmbedder(8))


@pytest.mark.parametrize("url", ["mysql://x/y", "postgresql://host/db?schema="])
def test_bad_urls_are_usage_errors(url):
    with pytest.raises(UsageError):
        PostgresStore(url, embedder=HashingEmbedder(8), connect_timeout=1)


def test_missing_extension_without_rights_says_what_to_run(pg_url):
    role, db = f"noext_{uuid.uuid4().hex[:8]}", f"noext_{uuid.uuid4().hex[:8]}"
    with _admin(pg_url) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{role}'")
        conn.execute(f"CREATE DATABASE {db} OWNER {role}")
    try:
        user_url = _with(pg_url, database=db).replace("postgres:", f"{role}:", 1)
        user_url = user_url.replace(f":{urlsplit(pg_url).password}@", f":pw-{role}@", 1)
        with pytest.raises(StoreError, match=r"CREATE EXTENSION vector") as info:
            PostgresStore(user_url, embedder=HashingEmbedder(8))
        assert db in str(info.value) and role in str(info.value)
        with _admin(_with(pg_url, database=db)) as conn:
            conn.execute("CREATE EXTENSION vector")
        with PostgresStore(user_url, embedder=HashingEmbedder(8)) as store:  # now it works
            store.add_records([R(actor_id="a", namespace="/n", text="x")])
            assert store.count_records() == 1
    finally:
        with _admin(pg_url) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            conn.execute(f"DROP ROLE IF EXISTS {role}")


# ---- the benchmark command -------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_bench_store_command(backend, request, tmp_path, capsys):
    pg_url = request.getfixturevalue("pg_url") if backend == "postgres" else ""
    url = pg_url or f"sqlite:///{tmp_path}/bench.db"
    code = main(
        [
            "bench",
            "store",
            "--store",
            url,
            "--records",
            "1500",
            "--namespaces",
            "5",
            "--queries",
            "30",
            "--dimension",
            "32",
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert {
        "backend",
        "records",
        "namespaces",
        "insert_per_s",
        "search_p50_ms",
        "search_p95_ms",
        "recall_at_10",
    } <= set(out)
    assert out["backend"] == ("postgresql" if backend == "postgres" else "sqlite")
    assert (out["records"], out["namespaces"]) == (1500, 5)
    assert out["recall_at_10"] == 1.0 and out["plan"] == "auto"  # 300 per namespace: exact scans
    assert out["insert_per_s"] > 0 and 0 < out["search_p50_ms"] <= out["search_p95_ms"]
    if backend == "sqlite":
        assert not (tmp_path / "bench.db").exists()  # removed afterwards
    else:
        with _admin(pg_url) as conn:
            left = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'recallwise_bench_%'")
            assert left.fetchall() == []


def test_bench_store_refuses_an_existing_sqlite_file(tmp_path, capsys):
    existing = tmp_path / "mine.db"
    existing.write_bytes(b"")
    args = ["bench", "store", "--store", f"sqlite:///{existing}", "--records", "10", "--json"]
    assert main([*args, "--namespaces", "2"]) == 2
    assert "new sqlite file" in capsys.readouterr().err
    assert main(args) == 2  # 100 namespaces by default
    assert "cannot exceed --records" in capsys.readouterr().err


def test_bench_store_can_force_a_plan(pg_url, tmp_path, capsys):
    args = [
        "bench",
        "store",
        "--records",
        "1500",
        "--namespaces",
        "3",
        "--queries",
        "30",
        "--dimension",
        "32",
    ]
    assert main([*args, "--store", pg_url, "--plan", "hnsw", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["plan"] == "hnsw" and out["recall_at_10"] >= 0.9
    assert main([*args, "--store", f"sqlite:///{tmp_path}/p.db", "--plan", "hnsw", "--json"]) == 2
    assert "chooses no search plan" in capsys.readouterr().err


# ---- failures are counted by kind ---------------------------------------------------------


def test_a_lost_connection_is_counted_as_unavailable(pg_url, schema):
    from recallwise import RecallPolicy

    with _open(pg_url, schema, pool_size=1) as store:
        store.add_records([R(actor_id="a", namespace="/facts/a", text="The user drinks tea.")])
        with store._conn("find the pooled session") as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        # The server ends the store's only session (as a restart or a failover would).
        with _admin(pg_url) as conn:
            assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
        policy = RecallPolicy(store, decider=None, namespaces=["/facts/{actorId}"])
        recall = policy.recall("tea", actor_id="a")
        assert recall.context == ""
        assert policy.stats.errors_by_kind == {"store:unavailable": 1}
        policy.close()


def test_a_cancelled_statement_is_counted_as_a_timeout(pg_url, schema):
    with _open(pg_url, schema) as store:
        with pytest.raises(StoreError) as info, store._conn("a slow search") as conn, conn.transaction():
            conn.execute("SET LOCAL statement_timeout = 50")
            conn.execute("SELECT pg_sleep(2)")
        assert info.value.kind == "timeout"
        with pytest.raises(StoreError) as info, store._conn("a bad query") as conn:
            conn.execute("SELECT * FROM no_such_table")
        assert info.value.kind == "error"
