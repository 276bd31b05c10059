"""The SQL functions a dense search runs: one per plan (exact, HNSW), with and without an actor.

Owns the generator of their ``CREATE FUNCTION`` statements (the migrations create them) and
their names (the store calls them). Which plan a search takes is the planner's business.
"""

from __future__ import annotations

from .planner import SearchPlan

__all__ = ["function_name", "search_function"]


def function_name(plan: SearchPlan, by_actor: bool) -> str:
    return f"nearest_{plan}" + ("_by_actor" if by_actor else "")


def search_function(plan: SearchPlan, by_actor: bool, *, half: bool = True) -> str:
    """``CREATE FUNCTION`` for one plan's search: (namespace[, actor], query, limit) -> ids.

    The planner's cost model does not know what the store knows about a namespace, so each plan
    steers its query: left alone, PostgreSQL sorted a 10k-record namespace through the B-tree
    instead of walking HNSW, and read a namespace holding a fifth of the table by a bitmap scan
    of the heap (20 ms) instead of the namespace index alone (14 ms). A SQL function with SET
    clauses is planned under them and never inlined, so the settings ride inside one
    statement, with no BEGIN / SET LOCAL / COMMIT per search (0.4 ms each, measured). With and
    without an actor are separate functions so that neither evaluates an ``actor IS NULL OR``
    test on every row of a large namespace.

    The exact plan ranks by the half-precision copy (``half``; schema version 2's function
    ranked by the full vectors) and its caller re-sorts what it returns by full precision.
    """
    where = "r.namespace = p_namespace" + (" AND r.actor_id = p_actor" if by_actor else "")
    actor = " p_actor text," if by_actor else ""
    replace = ""
    if plan == "exact" and half:
        settings = "SET enable_seqscan = off SET enable_bitmapscan = off"
        replace = "OR REPLACE "
        # The query's half-precision copy is made once (an InitPlan), not once per row. No
        # index orders by embedding_half, so this is a plain filtered scan and a top-N sort.
        body = (
            "SELECT r.id, r.seq, r.embedding_half <=> (SELECT p_query::{halfvec}) AS distance "
            f"FROM records r WHERE {where} ORDER BY 3, 2 LIMIT p_limit"
        )
    elif plan == "exact":
        settings = "SET enable_seqscan = off SET enable_bitmapscan = off"
        # OFFSET 0 keeps the scan a plain filtered scan (the HNSW index serves only an ORDER BY
        # on the distance): every distance in the namespace, read from the namespace B-tree.
        body = (
            "SELECT s.id, s.seq, s.distance FROM (SELECT r.id, r.seq, r.embedding <=> p_query "
            f"AS distance FROM records r WHERE {where} OFFSET 0) AS s "
            "ORDER BY s.distance, s.seq LIMIT p_limit"
        )
    else:
        settings = "SET enable_sort = off"
        body = (
            "SELECT r.id, r.seq, r.embedding <=> p_query FROM records r "
            f"WHERE {where} ORDER BY r.embedding <=> p_query LIMIT p_limit"
        )
    return (
        f"CREATE {replace}FUNCTION {{schema}}.{function_name(plan, by_actor)}(p_namespace text,{actor} "
        "p_query {vector}, p_limit integer) "
        "RETURNS TABLE (id text, seq bigint, distance double precision) LANGUAGE sql STABLE "
        f"SET search_path = {{schema}}, {{vector_schema}} {settings} AS $body$ {body} $body$"
    )
