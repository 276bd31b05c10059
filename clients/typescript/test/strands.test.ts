/**
 * Strands Agents TS (`@strands-agents/sdk`): a real `Agent` with a scripted `Model`, against a real
 * `recallwise serve` over the demo persona. Stock (the SDK's own memory injection over a top-k store)
 * versus gated (recallwise's injector; the same store behind `gatedMemoryStore`), on the chit-chat
 * turn and the drink turn; durable history stays clean; a killed service fails open.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Agent, Model, type BaseModelConfig, type MemoryEntry, type MemoryStore, type Message } from "@strands-agents/sdk";
import type { ModelStreamEvent } from "@strands-agents/sdk";
import { TestMemoryStore } from "@strands-agents/sdk/vended-memory-stores/test-memory-store";
import { RecallwiseClient, type RecallwiseWarning } from "../src/index.js";
import { gatedMemoryStore, recallwiseInjector } from "../src/strands.js";
import { ACTOR, DRINK, HELLO, serve, textOf, type Served } from "./server.js";

/** A step of the script: reply with text, or call a tool with this input. */
type Step = { text: string } | { tool: string; input: Record<string, unknown> };

/** A model that plays a script and records every input it received (the SDK ships no mock model). */
class ScriptedModel extends Model<BaseModelConfig> {
  readonly seen: string[] = [];
  private config: BaseModelConfig = { modelId: "scripted" };
  constructor(private readonly script: Step[] = []) {
    super();
  }
  updateConfig(config: BaseModelConfig): void {
    this.config = { ...this.config, ...config };
  }
  getConfig(): BaseModelConfig {
    return this.config;
  }
  async *stream(messages: Message[]): AsyncIterable<ModelStreamEvent> {
    this.seen.push(textOf(messages));
    const step = this.script.shift() ?? { text: "ok" };
    yield { type: "modelMessageStartEvent", role: "assistant" };
    if ("text" in step) {
      yield { type: "modelContentBlockDeltaEvent", delta: { type: "textDelta", text: step.text } };
      yield { type: "modelContentBlockStopEvent" };
      yield { type: "modelMessageStopEvent", stopReason: "endTurn" };
    } else {
      const toolUseId = `t${this.seen.length}`;
      yield { type: "modelContentBlockStartEvent", start: { type: "toolUseStart", name: step.tool, toolUseId } };
      yield { type: "modelContentBlockDeltaEvent", delta: { type: "toolUseInputDelta", input: JSON.stringify(step.input) } };
      yield { type: "modelContentBlockStopEvent" };
      yield { type: "modelMessageStopEvent", stopReason: "toolUse" };
    }
  }
}

let served: Served;
let client: RecallwiseClient;
const warnings: RecallwiseWarning[] = [];
let persona: string[] = [];

/**
 * The stock store: semantic top-k over the persona's records, as a vector store answers (k records
 * whether or not k are any use). Backed by the service's ungated `/v1/search`.
 */
function topKStore(): MemoryStore {
  return {
    name: "persona",
    writable: false,
    async search(query: string, options?: { maxSearchResults?: number }): Promise<MemoryEntry[]> {
      const found = await client.search(ACTOR, query, { limit: options?.maxSearchResults ?? 5 });
      return found.results.map((r) => ({ content: r.text, storeName: "persona" }));
    },
  };
}

async function turn(agent: Agent, model: ScriptedModel, message: string): Promise<string> {
  const before = model.seen.length;
  await agent.invoke(message);
  return model.seen.slice(before).join("\n");
}

before(async () => {
  served = await serve();
  client = new RecallwiseClient({ baseUrl: served.url, timeoutMs: 30_000, onWarning: (w) => warnings.push(w) });
  persona = (await client.listRecords(ACTOR, { limit: 100 })).records.map((r) => r.text);
});
after(async () => served.close());

test("stock: the SDK's injection puts top-k memories into every turn, chit-chat included", async () => {
  const model = new ScriptedModel();
  const agent = new Agent({ model, printer: false, memoryManager: { stores: [topKStore()], injection: true } });
  const hello = await turn(agent, model, HELLO);
  const drink = await turn(agent, model, DRINK);
  assert.match(hello, /The user/); // five records reach the model although "Hello!" needs none
  assert.match(drink, /flat white/);
});

test("gated injector: nothing on the chit-chat turn, the flat white and not the aisle seat on the drink turn", async () => {
  const model = new ScriptedModel();
  const agent = new Agent({ model, printer: false, plugins: [recallwiseInjector(client, { actorId: ACTOR })] });
  const hello = await turn(agent, model, HELLO);
  const drink = await turn(agent, model, DRINK);
  assert.doesNotMatch(hello, /user_context|The user/);
  assert.match(drink, /decaf oat flat white/);
  assert.doesNotMatch(drink, /aisle/i);
  // durable history is clean: the injected block reached the model call only
  const history = textOf(agent.messages);
  assert.doesNotMatch(history, /user_context|flat white/);
  assert.equal(agent.messages.length, 4);
});

test("the injector's stock arm injects the aisle seat as well (the comparison's control)", async () => {
  const model = new ScriptedModel();
  const agent = new Agent({ model, printer: false, plugins: [recallwiseInjector(client, { actorId: ACTOR, stock: true })] });
  const drink = await turn(agent, model, DRINK);
  assert.match(drink, /flat white/);
  assert.match(drink, /aisle seat/);
});

test("gatedMemoryStore: the SDK's own injection over a gated store keeps the drink records only", async () => {
  const model = new ScriptedModel();
  const store = gatedMemoryStore(topKStore(), client, { actorId: ACTOR });
  const agent = new Agent({ model, printer: false, memoryManager: { stores: [store], injection: true } });
  const hello = await turn(agent, model, HELLO);
  const drink = await turn(agent, model, DRINK);
  assert.doesNotMatch(hello, /The user/);
  assert.match(drink, /flat white/);
  assert.doesNotMatch(drink, /aisle/i);
  assert.doesNotMatch(textOf(agent.messages), /flat white/);
});

test("gatedMemoryStore gates the model's own search_memory tool calls (the SDK's TestMemoryStore)", async () => {
  const inner = new TestMemoryStore({ name: "notes", persist: false });
  for (const text of persona) await inner.add(text);
  const query = "user coffee drink preference"; // what the scripted model searches for
  const stockHits = (await inner.search(query)).map((e) => e.content);
  assert.ok(stockHits.some((t) => /aisle|Biscuit|Python/.test(t)), "the keyword store returns unrelated records");
  const gated = gatedMemoryStore(inner, client, { actorId: ACTOR });
  const model = new ScriptedModel([{ tool: "search_memory", input: { query } }, { text: "A decaf oat flat white." }]);
  const agent = new Agent({ model, printer: false, memoryManager: { stores: [gated], searchToolConfig: true } });
  await agent.invoke(DRINK);
  const toolResult = model.seen[1] ?? "";
  assert.match(toolResult, /flat white/);
  assert.doesNotMatch(toolResult, /aisle|Biscuit|Python/);
  assert.ok((await gated.search(query)).length < stockHits.length);
  // writes pass through to the inner store
  await gated.add!("The user likes jasmine tea.");
  assert.ok((await inner.search("jasmine")).some((e) => /jasmine/.test(e.content)));
});

test("a killed service fails open: the turn runs, nothing injected, one counted warning each", async () => {
  await served.kill();
  const before = client.stats.failedOpen;
  const model = new ScriptedModel();
  const agent = new Agent({ model, printer: false, plugins: [recallwiseInjector(client, { actorId: ACTOR })] });
  const drink = await turn(agent, model, DRINK);
  assert.doesNotMatch(drink, /user_context/);
  assert.equal(client.stats.failedOpen, before + 1);
  // the gated store falls back to its inner store's own results
  const inner = new TestMemoryStore({ name: "notes2", persist: false });
  await inner.add("The user drinks coffee.");
  const gated = gatedMemoryStore(inner, client, { actorId: ACTOR });
  assert.deepEqual(
    (await gated.search("coffee")).map((e) => e.content),
    ["The user drinks coffee."],
  );
  assert.equal(client.stats.failedOpen, before + 2);
  assert.equal(warnings.length, 2);
});
