/**
 * Mastra (`@mastra/core`, `@mastra/memory`): `recallwiseSemanticRecall` as an agent's input processor,
 * with Mastra's own `Agent`, `Memory`, `InMemoryStore` and mock model (`createMockModel`), against a
 * real `recallwise serve` over the demo persona. Mastra adds no `SemanticRecall` of its own when the
 * processor is configured; "Hello!" asks the service and injects nothing; the dinner question injects
 * the food preferences and not the flight or coding ones; the thread's stored messages never hold the context; a
 * killed service runs the fallback processor (Mastra's stock recall) and is counted.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Agent } from "@mastra/core/agent";
import type { InputProcessor } from "@mastra/core/processors";
import { InMemoryStore } from "@mastra/core/storage";
import { createMockModel } from "@mastra/core/test-utils/llm-mock";
import { Memory } from "@mastra/memory";
import { RecallwiseClient } from "../src/index.js";
import { recallwiseSemanticRecall } from "../src/mastra.js";
import { ACTOR, serve, type Served } from "./server.js";

const HELLO = "Hello!";
const DINNER = "What should I have for dinner?";

let served: Served;
let client: RecallwiseClient;

before(async () => {
  served = await serve();
  client = new RecallwiseClient({ baseUrl: served.url, timeoutMs: 30_000, onWarning: () => {} });
});
after(async () => served.close());

/** An agent over Mastra's own memory with the processor, and every prompt its model was sent. */
function agentWith(processor: InputProcessor, memory: Memory) {
  const prompts: string[] = [];
  const model = createMockModel({ mockText: "ok", spyGenerate: (props: unknown) => prompts.push(JSON.stringify(props)) });
  const agent = new Agent({
    id: "assistant",
    name: "assistant",
    instructions: "You are a helpful assistant.",
    model: model as never,
    memory,
    inputProcessors: [processor],
  });
  return { agent, prompts };
}

function memoryOf(storage: InMemoryStore, semanticRecall = false): Memory {
  const options = semanticRecall ? { lastMessages: 10, semanticRecall: true } : { lastMessages: 10 };
  // semantic recall needs a vector store and an embedder to be configured; neither is reached when
  // the processor owns recall (a real search would throw on these stand-ins)
  const extra = semanticRecall ? { vector: {} as never, embedder: {} as never } : {};
  return new Memory({ storage, options, ...extra });
}

test("a processor with id 'semantic-recall' replaces Mastra's own SemanticRecall", async () => {
  const processor = recallwiseSemanticRecall(client, { actorId: ACTOR });
  const memory = memoryOf(new InMemoryStore(), true);
  const added = await memory.getInputProcessors([processor]);
  assert.deepEqual(
    added.map((p) => ("id" in p ? p.id : "")).filter((id) => id === "semantic-recall"),
    [],
    "Mastra added a SemanticRecall of its own",
  );
  const stock = await memory.getInputProcessors([]).catch((error: Error) => error);
  // without the processor Mastra builds its own (and reaches the embedder: the stand-in fails it)
  assert.ok(stock instanceof Error || stock.some((p) => "id" in p && p.id === "semantic-recall"));
});

test("gated: 'Hello!' injects nothing; the dinner question injects the diet, not the flights", async () => {
  const processor = recallwiseSemanticRecall(client);
  const storage = new InMemoryStore();
  const { agent, prompts } = agentWith(processor, memoryOf(storage));
  const memory = { thread: "dinner-thread", resource: ACTOR };

  await agent.generate(HELLO, { memory });
  assert.equal(prompts.length, 1);
  assert.doesNotMatch(prompts[0] ?? "", /user_context|vegetarian/);
  assert.equal(processor.stats.asked, 1, "the service was asked about the chit-chat turn");
  assert.equal(processor.stats.injected, 0);

  await agent.generate(DINNER, { memory });
  const dinner = prompts[1] ?? "";
  assert.match(dinner, /user_context/);
  assert.match(dinner, /Vietnamese|vegetarian/);
  assert.doesNotMatch(dinner, /aisle seat|YVR|four spaces/);
  assert.equal(processor.stats.injected, 1);

  // the context was for that request only: the thread's stored messages never hold it
  const stored = await (await storage.getStore("memory"))!.listMessages({ threadId: "dinner-thread" });
  const text = JSON.stringify(stored);
  assert.match(text, /What should I have for dinner/);
  assert.doesNotMatch(text, /user_context|Vietnamese/);
});

test("one request is one decision however many input steps it takes", async () => {
  const processor = recallwiseSemanticRecall(client, { actorId: ACTOR });
  const { agent } = agentWith(processor, memoryOf(new InMemoryStore()));
  await agent.generate(DINNER, { memory: { thread: "steps-thread", resource: ACTOR } });
  assert.equal(processor.stats.asked, 1);
});

test("a dead service runs the fallback (Mastra's stock recall) and is counted", async () => {
  let fallbackRan = 0;
  const fallback: InputProcessor = {
    id: "stock-recall",
    processInput: ({ messageList }) => {
      fallbackRan += 1;
      return messageList;
    },
  };
  const dead = new RecallwiseClient({ baseUrl: "http://127.0.0.1:9", timeoutMs: 2_000, onWarning: () => {} });
  const processor = recallwiseSemanticRecall(dead, { actorId: ACTOR, fallback });
  const { agent, prompts } = agentWith(processor, memoryOf(new InMemoryStore()));
  await agent.generate(DINNER, { memory: { thread: "dead-thread", resource: ACTOR } });
  assert.equal(prompts.length, 1, "the request still went to the model");
  assert.equal(fallbackRan, 1);
  assert.equal(processor.stats.failedOpen, 1);
});
