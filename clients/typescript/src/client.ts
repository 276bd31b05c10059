/**
 * A typed client for `recallwise serve`.
 *
 * Reads ({@link RecallwiseClient.recall}, {@link RecallwiseClient.judge}) run inside an agent's
 * turn, so they **fail open**: a dead, slow or erroring service gives no memories (a recall) or
 * keeps every candidate (a judge), never a thrown error. They also **fail loudly**: every failure
 * is counted in {@link RecallwiseClient.stats} and reported once through `onWarning`. Writes and
 * deletes are the caller's own jobs and throw a {@link RecallwiseError} instead.
 *
 * @module
 */

import type {
  DecisionOut,
  DecisionPage,
  DeletedRecord,
  ErrorOut,
  EventsOut,
  ForgotActor,
  GateRefitOut,
  JudgeCandidateIn,
  JudgeOut,
  JudgeRefitOut,
  LabelledTurnOut,
  LabelsIn,
  LabelsOut,
  MessageIn,
  RecallOut,
  RecordIn,
  RecordPage,
  RecordsOut,
  SearchOut,
  TraceOut,
} from "./types.js";

/** Why a request failed: no answer in time, no connection, or an HTTP error status. */
export type FailureKind = "timeout" | "network" | "http" | "invalid";

/** A request to the service that failed (thrown by writes; counted and reported by reads). */
export class RecallwiseError extends Error {
  /** What went wrong. */
  readonly kind: FailureKind;
  /** The HTTP status, for `kind: "http"`. */
  readonly status: number | undefined;
  /** The request field the service named, when it named one (422, 413). */
  readonly field: string | undefined;
  /** The endpoint, e.g. `POST /v1/recall`. */
  readonly endpoint: string;

  constructor(endpoint: string, kind: FailureKind, message: string, status?: number, field?: string | null) {
    super(`recallwise ${endpoint}: ${message}`);
    this.name = "RecallwiseError";
    this.endpoint = endpoint;
    this.kind = kind;
    this.status = status;
    this.field = field ?? undefined;
  }
}

/** A warning a failed read reports (once per failure) before failing open. */
export interface RecallwiseWarning {
  /** The failure. */
  error: RecallwiseError;
  /** What the client did instead, e.g. "no memories this turn". */
  fallback: string;
}

/** Options of {@link RecallwiseClient}. */
export interface RecallwiseClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** An API key (sent as `Authorization: Bearer KEY`); none for a loopback server without keys. */
  apiKey?: string;
  /** Per-request deadline in milliseconds (default 2000): a slower service fails open. */
  timeoutMs?: number;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Called once for every failed read; default: `console.warn`. */
  onWarning?: (warning: RecallwiseWarning) => void;
}

/** Counters of everything the client did; a read that failed open is in `failures`. */
export interface RecallwiseStats {
  /** Requests sent. */
  requests: number;
  /** Recalls answered by the service. */
  recalls: number;
  /** Recalls whose context was non-empty. */
  injected: number;
  /** Judge calls answered by the service. */
  judged: number;
  /** Reads that failed and fell back (no memories, or every candidate kept). */
  failedOpen: number;
  /** Every failed request, by kind. */
  failures: Record<FailureKind, number>;
  /** Warnings reported through `onWarning`. */
  warnings: number;
  /** Errors the service reported inside a 200 reply (a decider or store that failed open there). */
  serviceErrors: number;
}

/** Options of one recall. */
export interface RecallRequest {
  /** The conversation, for follow-ups ("go on"). */
  sessionId?: string;
  /** Namespace templates for this turn, e.g. `/facts/{actorId}`. */
  namespaces?: string[];
  /** Records searched per namespace. */
  topK?: number;
  /** Most records kept. */
  maxRecords?: number;
  /** The control arm (always retrieve, no decisions), for comparisons. */
  stock?: boolean;
  /** Aborts the request (as well as the client's deadline). */
  signal?: AbortSignal;
}

/** A recall's answer; `failed` when the service could not be asked (then it is empty). */
export interface RecallResult extends RecallOut {
  /** True when this result is the fail-open fallback, not the service's answer. */
  failed: boolean;
}

/** A judge's answer; `failed` when the service could not be asked (then every candidate is kept). */
export interface JudgeResult extends JudgeOut {
  /** True when this result is the fail-open fallback, not the service's answer. */
  failed: boolean;
}

/**
 * What a recall that never reached the service traced. This and the two fallback answers below are
 * the client's own behaviour (failing open), typed by the generated wire types: a required field the
 * service adds fails `tsc` here until the fallback says what it is when the service was not reached.
 */
const EMPTY_TRACE: TraceOut = {
  skipped: "the service was not reached",
  gate_p: null,
  gate_threshold: null,
  follow_up_p: null,
  route: null,
  namespaces_searched: [],
  candidates: 0,
  kept: 0,
  dropped: 0,
  keep_rule: "none",
  notes: [],
  timings_ms: {},
  cache_hit: false,
};

/**
 * The client. One instance is safe to share across concurrent turns.
 *
 * @example
 * ```ts
 * const client = new RecallwiseClient({ baseUrl: "http://127.0.0.1:8080" });
 * const { context } = await client.recall("demo_user", "I'd like a drink, what should I get?");
 * ```
 */
export class RecallwiseClient {
  /** The service's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** The per-request deadline in milliseconds. */
  readonly timeoutMs: number;
  /** Counters (live; read them any time). */
  readonly stats: RecallwiseStats = {
    requests: 0,
    recalls: 0,
    injected: 0,
    judged: 0,
    failedOpen: 0,
    failures: { timeout: 0, network: 0, http: 0, invalid: 0 },
    warnings: 0,
    serviceErrors: 0,
  };
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly onWarning: (warning: RecallwiseWarning) => void;

  constructor(options: RecallwiseClientOptions) {
    if (!options || typeof options.baseUrl !== "string" || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError("RecallwiseClient: baseUrl must be an http(s) URL, e.g. http://127.0.0.1:8080");
    }
    const timeoutMs = options.timeoutMs ?? 2000;
    if (!(timeoutMs > 0)) throw new TypeError(`RecallwiseClient: timeoutMs must be positive, got ${timeoutMs}`);
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = timeoutMs;
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.onWarning =
      options.onWarning ??
      ((w) => console.warn(`recallwise: ${w.error.message}; ${w.fallback} (failed open)`));
  }

  /**
   * The gate, route, search and judge for one user message: the context block to inject.
   * Never throws for a service failure: the result is then empty with `failed: true`.
   */
  async recall(actorId: string, message: string, request: RecallRequest = {}): Promise<RecallResult> {
    const options: Record<string, unknown> = {};
    if (request.topK !== undefined) options.top_k = request.topK;
    if (request.maxRecords !== undefined) options.max_records = request.maxRecords;
    if (request.stock) options.stock = true;
    const body = {
      actor_id: actorId,
      message,
      session_id: request.sessionId,
      namespaces: request.namespaces,
      ...(Object.keys(options).length ? { options } : {}),
    };
    try {
      const out = await this.send<RecallOut>("POST", "/v1/recall", body, request.signal);
      this.stats.recalls += 1;
      if (out.context) this.stats.injected += 1;
      if (out.errors.length) this.stats.serviceErrors += 1;
      return { ...out, failed: false };
    } catch (error) {
      return {
        ...this.failOpen(error, "POST /v1/recall", "no memories this turn"),
        retrieved: false,
        follow_up: false,
        context_tokens: 0,
        records: [],
        trace: { ...EMPTY_TRACE, notes: [] },
      };
    }
  }

  /**
   * The service's judge over records your own memory returned: which belong in the prompt.
   * Never throws for a service failure: every candidate is then kept, with `failed: true`.
   */
  async judge(
    actorId: string,
    message: string,
    candidates: JudgeCandidateIn[],
    request: { stock?: boolean; gate?: boolean; signal?: AbortSignal } = {},
  ): Promise<JudgeResult> {
    const body = {
      actor_id: actorId,
      message,
      candidates,
      ...(request.stock ? { stock: true } : {}),
      ...(request.gate ? { gate: true } : {}),
    };
    try {
      const out = await this.send<JudgeOut>("POST", "/v1/judge", body, request.signal);
      this.stats.judged += 1;
      if (out.errors.length) this.stats.serviceErrors += 1;
      return { ...out, failed: false };
    } catch (error) {
      return {
        ...this.failOpen(error, "POST /v1/judge", "every candidate kept"),
        kept: candidates.map((_, i) => i),
        candidates: candidates.map((c, i) => ({
          index: i,
          id: c.id ?? null,
          kept: true,
          score: c.score ?? 0,
          judge_p: null,
        })),
      };
    }
  }

  /** Conversation messages in; facts and preferences extracted into records (throws on failure). */
  async addEvents(
    actorId: string,
    messages: MessageIn[],
    options: { sessionId?: string; extract?: boolean; signal?: AbortSignal } = {},
  ): Promise<EventsOut> {
    const body = {
      actor_id: actorId,
      messages,
      session_id: options.sessionId,
      extract: options.extract,
    };
    return this.send<EventsOut>("POST", "/v1/events", body, options.signal);
  }

  /** Records written as given, no extraction (throws on failure). */
  async addRecords(actorId: string, records: RecordIn[], signal?: AbortSignal): Promise<RecordsOut> {
    return this.send<RecordsOut>("POST", "/v1/records", { actor_id: actorId, records }, signal);
  }

  /** A page of the actor's records, oldest first (throws on failure). */
  async listRecords(
    actorId: string,
    options: { namespace?: string; cursor?: number; limit?: number; signal?: AbortSignal } = {},
  ): Promise<RecordPage> {
    const query = new URLSearchParams({ actor_id: actorId });
    if (options.namespace !== undefined) query.set("namespace", options.namespace);
    if (options.cursor !== undefined) query.set("cursor", String(options.cursor));
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    return this.send<RecordPage>("GET", `/v1/records?${query}`, undefined, options.signal);
  }

  /** Ungated, bounded search (for debugging and comparisons; throws on failure). */
  async search(
    actorId: string,
    query: string,
    options: { namespaces?: string[]; limit?: number; signal?: AbortSignal } = {},
  ): Promise<SearchOut> {
    const body = {
      actor_id: actorId,
      query,
      namespaces: options.namespaces,
      limit: options.limit,
    };
    return this.send<SearchOut>("POST", "/v1/search", body, options.signal);
  }

  /** Delete one record (throws on failure; a missing record is a 404 error). */
  async deleteRecord(recordId: string, signal?: AbortSignal): Promise<DeletedRecord> {
    return this.send<DeletedRecord>("DELETE", `/v1/records/${encodeURIComponent(recordId)}`, undefined, signal);
  }

  /** Forget a user: every record and event of theirs (needs the admin scope with keys; throws on failure). */
  async forget(actorId: string, signal?: AbortSignal): Promise<ForgotActor> {
    return this.send<ForgotActor>("DELETE", `/v1/actors/${encodeURIComponent(actorId)}`, undefined, signal);
  }

  /**
   * A page of the decision log, newest first (`recallwise serve --log`; needs the admin scope with
   * keys, and shows only the key's tenant; throws on failure). Pass `next_cursor` back as `cursor`.
   */
  async decisions(
    options: {
      actorId?: string;
      sessionId?: string;
      opened?: boolean;
      errors?: boolean;
      limit?: number;
      cursor?: number;
      signal?: AbortSignal;
    } = {},
  ): Promise<DecisionPage> {
    const query = new URLSearchParams();
    if (options.actorId !== undefined) query.set("actor_id", options.actorId);
    if (options.sessionId !== undefined) query.set("session_id", options.sessionId);
    if (options.opened !== undefined) query.set("opened", String(options.opened));
    if (options.errors !== undefined) query.set("errors", String(options.errors));
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.cursor !== undefined) query.set("cursor", String(options.cursor));
    return this.send<DecisionPage>("GET", `/v1/decisions?${query}`, undefined, options.signal);
  }

  /** One logged decision (throws on failure; another tenant's is a 404). */
  async decision(decisionId: number, signal?: AbortSignal): Promise<DecisionOut> {
    return this.send<DecisionOut>("GET", `/v1/decisions/${encodeURIComponent(String(decisionId))}`, undefined, signal);
  }

  /**
   * Label a logged decision: `gate` (true: memory was needed) and `records` (record id -> true: it
   * belongs); returns the labelled turn (throws on failure).
   */
  async addLabels(labels: LabelsIn, signal?: AbortSignal): Promise<LabelledTurnOut> {
    return this.send<LabelledTurnOut>("POST", "/v1/labels", labels, signal);
  }

  /** Every labelled decision, in the format `recallwise tune gate --fit` reads (throws on failure). */
  async labels(options: { actorId?: string; sessionId?: string; signal?: AbortSignal } = {}): Promise<LabelsOut> {
    const query = new URLSearchParams();
    if (options.actorId !== undefined) query.set("actor_id", options.actorId);
    if (options.sessionId !== undefined) query.set("session_id", options.sessionId);
    return this.send<LabelsOut>("GET", `/v1/labels?${query}`, undefined, options.signal);
  }

  /**
   * What refitting the gate or the judge head on the labels would do: the labelled turns' figures
   * before and after, as `recallwise tune gate|judge --from-log` fits them, and the commands that
   * apply it. Writes nothing; takes seconds on many labels (set `timeoutMs` to match). Throws on
   * failure: a 422 says why the labels cannot fit one (too few, one class only, no text logged).
   */
  async refitPreview(head: "gate", signal?: AbortSignal): Promise<GateRefitOut>;
  async refitPreview(head: "judge", signal?: AbortSignal): Promise<JudgeRefitOut>;
  async refitPreview(head: "gate" | "judge", signal?: AbortSignal): Promise<GateRefitOut | JudgeRefitOut> {
    return this.send<GateRefitOut | JudgeRefitOut>("POST", `/v1/refit-preview/${head}`, undefined, signal);
  }

  /** A call that failed, failing open: counted, warned of; returns the fields of every failed-open result. */
  private failOpen(error: unknown, endpoint: string, fallback: string) {
    const failure =
      error instanceof RecallwiseError ? error : new RecallwiseError(endpoint, "network", String(error));
    this.stats.failedOpen += 1;
    this.stats.warnings += 1;
    try {
      this.onWarning({ error: failure, fallback });
    } catch {
      // a throwing warning handler must not break the agent's turn either
    }
    return {
      gated: false,
      gate_open: null,
      context: "",
      errors: [String((error as Error).message)],
      error_kinds: [failure.kind],
      failed: true as const,
    };
  }

  private async send<T>(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const endpoint = `${method} ${path.split("?")[0]}`;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    this.stats.requests += 1;
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers,
        // JSON.stringify leaves out a key whose value is undefined: an option not given is not sent
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([deadline, signal]) : deadline,
      });
      text = await response.text();
    } catch (error) {
      const timedOut = deadline.aborted;
      const kind: FailureKind = timedOut ? "timeout" : "network";
      this.stats.failures[kind] += 1;
      const why = timedOut ? `no answer in ${this.timeoutMs} ms` : `${(error as Error).message ?? error}`;
      throw new RecallwiseError(endpoint, kind, why);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      this.stats.failures.http += 1;
      const detail = (parsed as ErrorOut | undefined)?.error;
      throw new RecallwiseError(
        endpoint,
        "http",
        `${response.status}: ${detail?.message ?? text.slice(0, 200)}`,
        response.status,
        detail?.field,
      );
    }
    if (parsed === undefined || typeof parsed !== "object") {
      this.stats.failures.invalid += 1;
      throw new RecallwiseError(endpoint, "invalid", `not a JSON object: ${text.slice(0, 200)}`);
    }
    return parsed as T;
  }
}
