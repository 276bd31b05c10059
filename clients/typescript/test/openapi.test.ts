/**
 * The TypeScript wire types agree with `openapi.json` (the snapshot a Python test keeps equal to the
 * app's live `/openapi.json`). Two halves: `tsc` checks each spec below against its interface (every
 * field listed, none extra, its required-ness and nullability right: `Spec<T>` is computed from the
 * type), and the test checks each spec against the snapshot's schema of the same name.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import type * as T from "../src/types.js";

type Presence<T, K extends keyof T> = {} extends Pick<T, K> ? "optional" : "required";
type Nullability<V> = null extends V ? "|null" : "";
/** For each field of T: "required" or "optional", then "|null" when null is allowed. */
type Spec<T> = { [K in keyof T]-?: `${Presence<T, K>}${Nullability<T[K]>}` };

const specs = {
  RecallOptionsIn: { top_k: "optional|null", max_records: "optional|null", stock: "optional" } satisfies Spec<T.RecallOptionsIn>,
  RecallIn: {
    actor_id: "required",
    message: "required",
    session_id: "optional|null",
    namespaces: "optional|null",
    options: "optional|null",
  } satisfies Spec<T.RecallIn>,
  RecordOut: {
    id: "required",
    text: "required",
    namespace: "required",
    score: "optional|null",
    judge_p: "optional|null",
    strategy: "optional",
    created_at: "optional|null",
    metadata: "optional|null",
  } satisfies Spec<T.RecordOut>,
  TraceOut: {
    skipped: "required|null",
    gate_p: "required|null",
    gate_threshold: "required|null",
    follow_up_p: "required|null",
    route: "required|null",
    namespaces_searched: "required",
    candidates: "required",
    kept: "required",
    dropped: "required",
    keep_rule: "required",
    notes: "required",
    timings_ms: "required",
    cache_hit: "required",
  } satisfies Spec<T.TraceOut>,
  RecallOut: {
    gated: "required",
    gate_open: "required|null",
    retrieved: "required",
    follow_up: "required",
    context: "required",
    context_tokens: "required",
    records: "required",
    trace: "required",
    errors: "required",
    error_kinds: "required",
  } satisfies Spec<T.RecallOut>,
  JudgeCandidateIn: {
    text: "required",
    id: "optional|null",
    namespace: "optional|null",
    score: "optional|null",
  } satisfies Spec<T.JudgeCandidateIn>,
  JudgeIn: { actor_id: "required", message: "required", candidates: "required", stock: "optional", gate: "optional" } satisfies Spec<T.JudgeIn>,
  JudgeVerdictOut: {
    index: "required",
    id: "required|null",
    kept: "required",
    score: "required",
    judge_p: "required|null",
  } satisfies Spec<T.JudgeVerdictOut>,
  JudgeOut: {
    gated: "required",
    gate_open: "required|null",
    context: "required",
    kept: "required",
    candidates: "required",
    errors: "required",
    error_kinds: "required",
  } satisfies Spec<T.JudgeOut>,
  MessageIn: { role: "optional", text: "required" } satisfies Spec<T.MessageIn>,
  EventsIn: { actor_id: "required", session_id: "optional|null", messages: "required", extract: "optional" } satisfies Spec<T.EventsIn>,
  EventsOut: {
    actor_id: "required",
    session_id: "required",
    events: "required",
    memories_extracted: "optional",
    added: "optional",
    updated: "optional",
    unchanged: "optional",
    records: "optional",
  } satisfies Spec<T.EventsOut>,
  RecordIn: { text: "required", namespace: "optional|null", strategy: "optional|null", metadata: "optional|null" } satisfies Spec<T.RecordIn>,
  RecordsIn: { actor_id: "required", records: "required" } satisfies Spec<T.RecordsIn>,
  RecordsOut: { actor_id: "required", added: "required", records: "required" } satisfies Spec<T.RecordsOut>,
  RecordPage: { actor_id: "required", total: "required", records: "required", next_cursor: "required|null" } satisfies Spec<T.RecordPage>,
  DeletedRecord: { deleted: "required", id: "required" } satisfies Spec<T.DeletedRecord>,
  ForgotActor: { actor_id: "required", deleted_records: "required", deleted_events: "required" } satisfies Spec<T.ForgotActor>,
  SearchIn: { actor_id: "required", query: "required", namespaces: "optional|null", limit: "optional" } satisfies Spec<T.SearchIn>,
  SearchOut: { query: "required", results: "required" } satisfies Spec<T.SearchOut>,
  ErrorDetail: { message: "required", field: "optional|null", status: "required" } satisfies Spec<T.ErrorDetail>,
  ErrorOut: { error: "required" } satisfies Spec<T.ErrorOut>,
  DecisionCandidateOut: {
    id: "required",
    namespace: "required",
    text: "optional|null",
    score: "required",
    judge_p: "required|null",
    kept: "required",
    reason: "required",
    label: "required|null",
  } satisfies Spec<T.DecisionCandidateOut>,
  DecisionOut: {
    id: "required",
    time: "required",
    actor_id: "required",
    session_id: "required|null",
    message: "optional|null",
    decider: "required",
    gate_p: "required|null",
    gate_threshold: "required|null",
    gate_open: "required|null",
    follow_up_p: "required|null",
    route: "required|null",
    namespaces_searched: "required",
    candidates: "required",
    kept: "required",
    dropped: "required",
    keep_rule: "required",
    context_tokens: "required",
    stock_tokens: "required|null",
    errors: "required",
    error_kinds: "required",
    failed_open: "required",
    notes: "required",
    total_ms: "required|null",
    label: "required|null",
  } satisfies Spec<T.DecisionOut>,
  DecisionPage: { decisions: "required", next_cursor: "required|null", content_logged: "required" } satisfies Spec<T.DecisionPage>,
  LabelsIn: { decision_id: "required", gate: "optional|null", records: "optional|null" } satisfies Spec<T.LabelsIn>,
  LabelledRecordOut: { id: "required", text: "optional|null", label: "required" } satisfies Spec<T.LabelledRecordOut>,
  LabelledTurnOut: {
    decision_id: "required",
    time: "required",
    actor_id: "required",
    session_id: "required|null",
    text: "optional|null",
    label: "optional|null",
    records: "optional|null",
  } satisfies Spec<T.LabelledTurnOut>,
  LabelsOut: { labels: "required" } satisfies Spec<T.LabelsOut>,
};

interface Schema {
  properties: Record<string, { anyOf?: { type?: string }[]; type?: string }>;
  required?: string[];
}
const document = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, Schema> };
};

/** The snapshot's schema as a spec, in the same notation. */
function specOf(schema: Schema): Record<string, string> {
  const required = new Set(schema.required ?? []);
  return Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => {
      const nullable = (property.anyOf ?? []).some((branch) => branch.type === "null");
      return [name, `${required.has(name) ? "required" : "optional"}${nullable ? "|null" : ""}`];
    }),
  );
}

for (const [name, spec] of Object.entries(specs)) {
  test(`the ${name} type agrees with openapi.json`, () => {
    const schema = document.components.schemas[name];
    assert.ok(schema, `openapi.json has no schema ${name}`);
    const sorted = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).sort());
    assert.deepEqual(sorted(spec), sorted(specOf(schema)));
  });
}

test("every request and response schema the client uses is typed", () => {
  const used = new Set<string>();
  for (const path of [
    "/v1/recall",
    "/v1/judge",
    "/v1/events",
    "/v1/records",
    "/v1/records/{record_id}",
    "/v1/actors/{actor_id}",
    "/v1/search",
    "/v1/decisions",
    "/v1/decisions/{decision_id}",
    "/v1/labels",
  ]) {
    const text = JSON.stringify(document.paths[path]);
    for (const match of text.matchAll(/#\/components\/schemas\/(\w+)/g)) used.add(match[1]!);
  }
  const missing = [...used].filter((name) => !(name in specs) && name !== "HTTPValidationError" && name !== "ValidationError");
  assert.deepEqual(missing, []);
});
