/**
 * recallwise for Mastra (`@mastra/core`, an optional peer dependency): an input processor that owns
 * semantic recall.
 *
 * Mastra's `Memory` with `semanticRecall` adds its own `SemanticRecall` input processor and searches
 * the vector store on every message (mastra-ai/mastra #11702: "Hi" taking 30 s instead of 3 s). An
 * input processor whose id is `'semantic-recall'` in the agent's `inputProcessors` replaces it: Mastra
 * then adds none of its own. {@link recallwiseSemanticRecall} is that processor: once per
 * `generate` / `stream` it asks `recallwise serve` about the user's message; when the gate closes it
 * adds nothing, when it opens it adds the kept records as a system message tagged `'memory'` (the
 * tag Mastra's own recall uses: the model sees it for this request, the thread's stored messages
 * never hold it). When the service fails, the request goes on with the stock behaviour: the
 * `fallback` processor (give it Mastra's own `SemanticRecall`) runs instead, or nothing is added.
 *
 * @example
 * ```ts
 * const agent = new Agent({
 *   name: "assistant", instructions: "...", model,
 *   memory: new Memory({ storage, options: { lastMessages: 10 } }),
 *   inputProcessors: [recallwiseSemanticRecall(client)],
 * });
 * await agent.generate("What should I have for dinner?", { memory: { thread: "t1", resource: "demo_user" } });
 * ```
 *
 * @module
 */

import type { InputProcessor, Processor } from "@mastra/core/processors";
import type { RecallwiseClient } from "./client.js";

type InputArgs = Parameters<NonNullable<Processor["processInput"]>>[0];
type InputResult = Awaited<ReturnType<NonNullable<Processor["processInput"]>>>;

/** Options of {@link recallwiseSemanticRecall}. */
export interface RecallwiseSemanticRecallOptions {
  /** Whose memory to search; default: the request's memory `resource` (Mastra's user id). */
  actorId?: string;
  /** Namespace templates to search; default: the service's. */
  namespaces?: string[];
  /** The control arm (no decisions: every message recalls), for comparisons. */
  stock?: boolean;
  /** What runs when the service fails (Mastra's own `SemanticRecall`, for its stock behaviour). */
  fallback?: InputProcessor;
}

/** The counts of one processor: what it did, for tests and dashboards. */
export interface RecallwiseSemanticRecallStats {
  /** User messages asked about. */
  asked: number;
  /** Requests it added a context block to. */
  injected: number;
  /** Requests the service failed on (the fallback ran, or nothing was added). */
  failedOpen: number;
}

/** An input processor that also says what it did. */
export type RecallwiseSemanticRecall = InputProcessor & {
  readonly id: "semantic-recall";
  readonly stats: RecallwiseSemanticRecallStats;
};

interface MemoryContext {
  thread?: { id?: string };
  resourceId?: string;
}

/** The text of the last user message (Mastra's own rule: the `content` string, else its text parts). */
export function lastUserText(messages: InputArgs["messages"]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message || message.role !== "user") continue;
    const content = message.content as { content?: unknown; parts?: Array<{ type: string; text?: string }> };
    if (typeof content !== "object" || content === null) continue;
    if (typeof content.content === "string" && content.content.trim()) return content.content;
    const text = (content.parts ?? [])
      .filter((part) => part.type === "text" && part.text)
      .map((part) => part.text)
      .join(" ");
    if (text.trim()) return text;
  }
  return "";
}

/**
 * An input processor with id `'semantic-recall'` that owns recall by asking `recallwise serve`
 * (see the module). Put it in the agent's `inputProcessors`.
 */
export function recallwiseSemanticRecall(
  client: RecallwiseClient,
  options: RecallwiseSemanticRecallOptions = {},
): RecallwiseSemanticRecall {
  if (options.actorId !== undefined && (typeof options.actorId !== "string" || !options.actorId)) {
    throw new TypeError("recallwiseSemanticRecall: options.actorId must be a non-empty string");
  }
  const stats: RecallwiseSemanticRecallStats = { asked: 0, injected: 0, failedOpen: 0 };
  const fallback = async (args: InputArgs): Promise<InputResult> => {
    stats.failedOpen += 1;
    return options.fallback?.processInput ? options.fallback.processInput(args) : args.messageList;
  };
  return {
    id: "semantic-recall",
    name: "recallwise",
    stats,
    async processInput(args: InputArgs): Promise<InputResult> {
      const { messages, messageList, requestContext } = args;
      const text = lastUserText(messages);
      if (!text) return messageList;
      const memory = requestContext?.get("MastraMemory") as MemoryContext | undefined;
      const actorId = options.actorId ?? memory?.resourceId;
      if (!actorId) return messageList; // no user to recall for: Mastra's own recall would not run either
      stats.asked += 1;
      const result = await client.recall(actorId, text, {
        ...(memory?.thread?.id ? { sessionId: memory.thread.id } : {}),
        ...(options.namespaces !== undefined ? { namespaces: options.namespaces } : {}),
        ...(options.stock ? { stock: true } : {}),
      });
      if ("failed" in result && result.failed) return fallback(args);
      if (!result.context) return messageList;
      stats.injected += 1;
      messageList.addSystem({ role: "system", content: result.context }, "memory");
      return messageList;
    },
  };
}
