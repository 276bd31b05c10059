/**
 * The wire types of `recallwise serve`'s HTTP API, written against `openapi.json` (a snapshot of the
 * app's `/openapi.json` that a Python test compares to the live app). `test/openapi.test.ts` checks
 * every interface here against the snapshot's schema of the same name: the same fields, the same
 * required ones, the same nullable ones.
 *
 * @module
 */

/** Per-turn options of a recall. */
export interface RecallOptionsIn {
  /** Records searched per namespace this turn. */
  top_k?: number | null;
  /** Most records kept this turn. */
  max_records?: number | null;
  /** The control arm: always retrieve, keep top_k (no decisions). */
  stock?: boolean;
}

/** The body of `POST /v1/recall`. */
export interface RecallIn {
  /** Your user's id (scoped by your key's tenant). */
  actor_id: string;
  /** The user's message this turn. */
  message: string;
  /** The conversation, for follow-ups ("go on"). */
  session_id?: string | null;
  /** Namespace templates, e.g. `/facts/{actorId}`. */
  namespaces?: string[] | null;
  options?: RecallOptionsIn | null;
}

/** A stored record as the service returns it. */
export interface RecordOut {
  id: string;
  text: string;
  namespace: string;
  score?: number | null;
  /** The judge's probability that the record belongs in this turn's prompt. */
  judge_p?: number | null;
  strategy?: string;
  created_at?: number | null;
  metadata?: Record<string, unknown> | null;
}

/** What one turn did, stage by stage. */
export interface TraceOut {
  skipped: string | null;
  gate_p: number | null;
  gate_threshold: number | null;
  follow_up_p: number | null;
  route: Record<string, number> | null;
  namespaces_searched: string[];
  candidates: number;
  kept: number;
  dropped: number;
  keep_rule: string;
  notes: string[];
  timings_ms: Record<string, number>;
  cache_hit: boolean;
}

/** The reply of `POST /v1/recall`. */
export interface RecallOut {
  /** Decisions were made (false: the stock arm). */
  gated: boolean;
  gate_open: boolean | null;
  retrieved: boolean;
  follow_up: boolean;
  /** The block to inject; empty when nothing is kept. */
  context: string;
  context_tokens: number;
  records: RecordOut[];
  trace: TraceOut;
  /** What failed this turn (the turn failed open). */
  errors: string[];
  error_kinds: string[];
}

/** One record a client's own memory returned, for the judge. */
export interface JudgeCandidateIn {
  /** The record's text, as the client's memory returned it. */
  text: string;
  /** The client's id for it, echoed back. */
  id?: string | null;
  /** Where it came from (a template with `{actorId}`). */
  namespace?: string | null;
  /** The memory's relevance score in [0, 1]; default: cosine similarity to the message. */
  score?: number | null;
}

/** The body of `POST /v1/judge`. */
export interface JudgeIn {
  actor_id: string;
  /** The user's message (or the search query) the records answer. */
  message: string;
  /** The records to judge (at most 50; 413 above). */
  candidates: JudgeCandidateIn[];
  /** The control arm: keep those above the score floor. */
  stock?: boolean;
  /** Ask the gate first: a message that needs no memory keeps nothing. */
  gate?: boolean;
}

/** The judge's verdict on one candidate. */
export interface JudgeVerdictOut {
  /** The candidate's position in the request. */
  index: number;
  id: string | null;
  kept: boolean;
  score: number;
  judge_p: number | null;
}

/** The reply of `POST /v1/judge`. */
export interface JudgeOut {
  /** The judge decided (false: the stock arm's score floor). */
  gated: boolean;
  /** The gate's verdict when it was asked (`gate: true`), else null. */
  gate_open: boolean | null;
  /** The kept records as a context block; empty when none is kept. */
  context: string;
  /** Indexes of the kept candidates, best first. */
  kept: number[];
  candidates: JudgeVerdictOut[];
  /** What failed (the judge failed open: all kept). */
  errors: string[];
  error_kinds: string[];
}

/** One conversation message to remember. */
export interface MessageIn {
  role?: "user" | "assistant";
  text: string;
}

/** The body of `POST /v1/events`. */
export interface EventsIn {
  actor_id: string;
  session_id?: string | null;
  messages: MessageIn[];
  /** Extract facts and preferences into records now (default true). */
  extract?: boolean;
}

/** The reply of `POST /v1/events`. */
export interface EventsOut {
  actor_id: string;
  session_id: string;
  events: number;
  memories_extracted?: number;
  added?: number;
  updated?: number;
  unchanged?: number;
  records?: Record<string, unknown>[];
}

/** One record to write as given. */
export interface RecordIn {
  text: string;
  /** A template with `{actorId}`; default: the service's first namespace. */
  namespace?: string | null;
  strategy?: string | null;
  metadata?: Record<string, unknown> | null;
}

/** The body of `POST /v1/records`. */
export interface RecordsIn {
  actor_id: string;
  records: RecordIn[];
}

/** The reply of `POST /v1/records`. */
export interface RecordsOut {
  actor_id: string;
  added: number;
  records: RecordOut[];
}

/** The reply of `GET /v1/records`. */
export interface RecordPage {
  actor_id: string;
  total: number;
  records: RecordOut[];
  next_cursor: number | null;
}

/** The reply of `DELETE /v1/records/{record_id}`. */
export interface DeletedRecord {
  deleted: number;
  id: string;
}

/** The reply of `DELETE /v1/actors/{actor_id}`. */
export interface ForgotActor {
  actor_id: string;
  deleted_records: number;
  deleted_events: number;
}

/** The body of `POST /v1/search` (ungated, for debugging). */
export interface SearchIn {
  actor_id: string;
  query: string;
  namespaces?: string[] | null;
  limit?: number;
}

/** The reply of `POST /v1/search`. */
export interface SearchOut {
  query: string;
  results: RecordOut[];
}

/** The service's one error shape's detail. */
export interface ErrorDetail {
  message: string;
  /** The request field at fault, when one is. */
  field?: string | null;
  status: number;
}

/** The service's one error shape. */
export interface ErrorOut {
  error: ErrorDetail;
}

/** A record a logged turn's search returned, and what the judge made of it. */
export interface DecisionCandidateOut {
  id: string;
  namespace: string;
  /** The record's text; absent unless the server runs with `--log-content`. */
  text?: string | null;
  /** The store's relevance score in [0, 1]. */
  score: number;
  /** The judge's probability that it belongs (null: not judged). */
  judge_p: number | null;
  kept: boolean;
  /** Why it was kept or dropped. */
  reason: string;
  /** The label given: true, it belongs; null: not labelled. */
  label: boolean | null;
}

/** One logged turn, as the policy decided it (`GET /v1/decisions`, needs the admin scope). */
export interface DecisionOut {
  /** The decision id (labels name it). */
  id: number;
  /** When, ISO 8601 UTC. */
  time: string;
  actor_id: string;
  session_id: string | null;
  /** The user's message; absent unless the server runs with `--log-content`. */
  message?: string | null;
  decider: string;
  /** The gate's probability that memory is needed (null: no answer). */
  gate_p: number | null;
  gate_threshold: number | null;
  /** The turn retrieved (null: nothing to decide). */
  gate_open: boolean | null;
  follow_up_p: number | null;
  /** The route's probability per namespace template. */
  route: Record<string, number> | null;
  namespaces_searched: string[];
  candidates: DecisionCandidateOut[];
  kept: number;
  dropped: number;
  keep_rule: string;
  /** Tokens injected. */
  context_tokens: number;
  /** Tokens the stock arm would have injected (null: not known). */
  stock_tokens: number | null;
  errors: string[];
  error_kinds: string[];
  /** Stages that failed open this turn: `gate`, `judge`. */
  failed_open: string[];
  notes: string[];
  total_ms: number | null;
  /** The gate label: true, memory was needed; null: not labelled. */
  label: boolean | null;
}

/** The reply of `GET /v1/decisions`: a page, newest first. */
export interface DecisionPage {
  decisions: DecisionOut[];
  /** The cursor of the next (older) page; null on the last. */
  next_cursor: number | null;
  /** The log keeps message and memory text (`--log-content`). */
  content_logged: boolean;
}

/** The body of `POST /v1/labels` (give `gate`, `records` or both). */
export interface LabelsIn {
  decision_id: number;
  /** True: memory was needed this turn. */
  gate?: boolean | null;
  /** Record id -> true: it belongs in the prompt (each one of the turn's candidates). */
  records?: Record<string, boolean> | null;
}

/** A labelled record of a labelled turn. */
export interface LabelledRecordOut {
  id: string;
  /** Absent unless the log keeps content. */
  text?: string | null;
  label: boolean;
}

/** A labelled turn: what `recallwise tune gate --fit` and the judge's fit read. */
export interface LabelledTurnOut {
  decision_id: number;
  time: string;
  actor_id: string;
  session_id: string | null;
  /** The message; absent unless the log keeps content. */
  text?: string | null;
  /** The gate label; absent when not labelled. */
  label?: boolean | null;
  /** Absent when none is labelled. */
  records?: LabelledRecordOut[] | null;
}

/** The reply of `GET /v1/labels`. */
export interface LabelsOut {
  labels: LabelledTurnOut[];
}
