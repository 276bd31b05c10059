/**
 * recallwise for Vercel's AI SDK (`ai`, an optional peer dependency): a language-model middleware.
 *
 * On a call whose last prompt message is the user's, {@link recallwiseMiddleware} asks
 * `recallwise serve` and, when it keeps something, puts the context block in front of that message's
 * text for this call only; other calls (chit-chat, tool-result steps) pass through unchanged, as the
 * same params object. Fails open: a dead or slow service means the call goes out unchanged.
 *
 * @module
 */

import type { LanguageModelMiddleware } from "ai";
import type { RecallwiseClient } from "./client.js";

type TransformParams = NonNullable<LanguageModelMiddleware["transformParams"]>;
type CallOptions = Parameters<TransformParams>[0]["params"];

/** Options of {@link recallwiseMiddleware}. */
export interface RecallwiseMiddlewareOptions {
  /** Your user's id (scoped by the client's key's tenant). */
  actorId: string;
  /** The conversation, for follow-ups ("go on"). */
  sessionId?: string;
  /** Namespace templates to search; default: the service's. */
  namespaces?: string[];
  /** The control arm (no decisions), for comparisons. */
  stock?: boolean;
}

/**
 * A language-model middleware (`wrapLanguageModel({ model, middleware })`) that injects
 * recallwise's context on the turns that need memory.
 *
 * @example
 * ```ts
 * const model = wrapLanguageModel({ model: base, middleware: recallwiseMiddleware(client, { actorId: "demo_user" }) });
 * ```
 */
export function recallwiseMiddleware(
  client: RecallwiseClient,
  options: RecallwiseMiddlewareOptions,
): LanguageModelMiddleware {
  if (!options || typeof options.actorId !== "string" || !options.actorId) {
    throw new TypeError("recallwiseMiddleware: options.actorId (your user's id) is required");
  }
  return {
    specificationVersion: "v4",
    async transformParams({ params }: { params: CallOptions }): Promise<CallOptions> {
      const prompt = params.prompt;
      const last = prompt[prompt.length - 1];
      if (!last || last.role !== "user") return params;
      const text = last.content
        .map((part) => (part.type === "text" ? part.text : ""))
        .join("\n")
        .trim();
      if (!text) return params;
      const result = await client.recall(options.actorId, text, {
        ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
        ...(options.namespaces !== undefined ? { namespaces: options.namespaces } : {}),
        ...(options.stock ? { stock: true } : {}),
      });
      if (!result.context) return params;
      const injected = { ...last, content: [{ type: "text" as const, text: result.context }, ...last.content] };
      return { ...params, prompt: [...prompt.slice(0, -1), injected] };
    },
  };
}
