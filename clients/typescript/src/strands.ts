/**
 * recallwise for Strands Agents' TypeScript SDK (`@strands-agents/sdk`, an optional peer dependency).
 *
 * - {@link recallwiseInjector}: a `ContextInjector` plugin whose async `renderContent` asks
 *   `recallwise serve` on every fresh user turn and injects the judged context block, or nothing
 *   (`undefined`) on the turns that need no memory. Strands folds it into that one model call only:
 *   it never enters `agent.messages` or a session.
 * - {@link gatedMemoryStore}: wraps any Strands `MemoryStore` so that every search (the memory
 *   manager's injection and the model's own `search_memory` tool calls alike) returns only what the
 *   service's judge keeps.
 *
 * Both fail open: a dead or slow service means no injected context, or the inner store's own results.
 *
 * @module
 */

import type { MemoryEntry, MemoryStore, SearchOptions } from "@strands-agents/sdk";
import { ContextInjector } from "@strands-agents/sdk/vended-plugins/context-injector";
import type { RecallwiseClient } from "./client.js";

/** Options of {@link recallwiseInjector}. */
export interface RecallwiseInjectorOptions {
  /** Your user's id (scoped by the client's key's tenant). */
  actorId: string;
  /** The conversation, for follow-ups ("go on"). */
  sessionId?: string;
  /** Namespace templates to search, e.g. `/facts/{actorId}`; default: the service's. */
  namespaces?: string[];
  /** The control arm (the service retrieves and keeps top-k with no decisions), for comparisons. */
  stock?: boolean;
  /** The plugin's name (default `recallwise:context-injector`). */
  name?: string;
}

/** The text of the latest user message, or undefined when the latest message is not a user's ask. */
function latestUserText(messages: ReadonlyArray<{ role: string; content: ReadonlyArray<unknown> }>): string | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "user") return undefined;
  const parts: string[] = [];
  for (const block of last.content) {
    if (block && typeof block === "object") {
      if ("toolResult" in block) return undefined; // a tool result turn, not a fresh ask
      if ("text" in block && typeof (block as { text: unknown }).text === "string") {
        parts.push((block as { text: string }).text);
      }
    }
  }
  const text = parts.join("\n").trim();
  return text || undefined;
}

/**
 * A Strands `ContextInjector` plugin that injects recallwise's judged context on the turns that
 * need memory, and nothing (`undefined`) on the others.
 *
 * @example
 * ```ts
 * const agent = new Agent({ model, plugins: [recallwiseInjector(client, { actorId: "demo_user" })] });
 * ```
 */
export function recallwiseInjector(client: RecallwiseClient, options: RecallwiseInjectorOptions): ContextInjector {
  if (!options || typeof options.actorId !== "string" || !options.actorId) {
    throw new TypeError("recallwiseInjector: options.actorId (your user's id) is required");
  }
  return new ContextInjector({
    name: options.name ?? "recallwise:context-injector",
    trigger: "userTurn",
    renderContent: async ({ messages }) => {
      const text = latestUserText(messages);
      if (!text) return undefined;
      const result = await client.recall(options.actorId, text, {
        ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
        ...(options.namespaces !== undefined ? { namespaces: options.namespaces } : {}),
        ...(options.stock ? { stock: true } : {}),
      });
      return result.context || undefined;
    },
  });
}

/** Options of {@link gatedMemoryStore}. */
export interface GatedMemoryStoreOptions {
  /** The user's id the judge decides for (default `anonymous`: the judge reads no stored records). */
  actorId?: string;
  /** The control arm (the service's score floor instead of its judge), for comparisons. */
  stock?: boolean;
  /**
   * Ask the gate before the judge (default true): a query that needs no memory ("Hello!") gets no
   * entries. Set false to judge every search's results on their own.
   */
  gate?: boolean;
}

/**
 * Gate any Strands `MemoryStore`: its search results go to the service's judge, and only the
 * records it keeps come back, best first. Writes, tools and initialisation pass through unchanged.
 * Fails open: when the service cannot be asked, the inner store's results come back as they are.
 *
 * @example
 * ```ts
 * const store = gatedMemoryStore(new TestMemoryStore({ name: "notes" }), client, { actorId: "demo_user" });
 * const agent = new Agent({ model, memoryManager: { stores: [store], injection: true } });
 * ```
 */
export function gatedMemoryStore(
  inner: MemoryStore,
  client: RecallwiseClient,
  options: GatedMemoryStoreOptions = {},
): MemoryStore {
  const actorId = options.actorId ?? "anonymous";
  const gated: MemoryStore = {
    name: inner.name,
    writable: inner.writable,
    ...(inner.description !== undefined ? { description: inner.description } : {}),
    ...(inner.maxSearchResults !== undefined ? { maxSearchResults: inner.maxSearchResults } : {}),
    ...(inner.extraction !== undefined ? { extraction: inner.extraction } : {}),
    async search(query: string, searchOptions?: SearchOptions): Promise<MemoryEntry[]> {
      const entries = await inner.search(query, searchOptions);
      if (entries.length === 0 || !query.trim()) return entries;
      const judged = await client.judge(
        actorId,
        query,
        entries.map((entry, i) => ({ text: entry.content, id: String(i), namespace: `/strands/${inner.name}` })),
        { stock: options.stock ?? false, gate: options.gate ?? true },
      );
      if (judged.failed) return entries;
      return judged.kept.map((i) => entries[i]).filter((e): e is MemoryEntry => e !== undefined);
    },
  };
  if (inner.add) gated.add = inner.add.bind(inner);
  if (inner.addMessages) gated.addMessages = inner.addMessages.bind(inner);
  if (inner.initialize) gated.initialize = inner.initialize.bind(inner);
  if (inner.getTools) gated.getTools = inner.getTools.bind(inner);
  return gated;
}
