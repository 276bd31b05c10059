/**
 * Vercel's AI SDK (`ai`): `recallwiseMiddleware` through `wrapLanguageModel` and `generateText`, with
 * the SDK's own `MockLanguageModelV4` (from `ai/test`), against a real `recallwise serve` over the demo
 * persona. Stock (no middleware, as the AI SDK has no built-in long-term memory; and the service's stock
 * arm) versus gated, on the chit-chat turn and the drink turn; the caller's messages stay clean; a
 * killed service fails open.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { generateText, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { RecallwiseClient, type RecallwiseWarning } from "../src/index.js";
import { recallwiseMiddleware } from "../src/ai.js";
import { ACTOR, DRINK, HELLO, serve, textOf, type Served } from "./server.js";

let served: Served;
let client: RecallwiseClient;
const warnings: RecallwiseWarning[] = [];

function mockModel(): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: "text", text: "ok" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    }),
  });
}

/** What the model received on one `generateText` call over these messages. */
async function received(model: MockLanguageModelV4, wrapped: Parameters<typeof generateText>[0]["model"], messages: ModelMessage[]): Promise<string> {
  await generateText({ model: wrapped, messages });
  const call = model.doGenerateCalls[model.doGenerateCalls.length - 1];
  assert.ok(call, "the model was called");
  return textOf(call.prompt);
}

before(async () => {
  served = await serve();
  client = new RecallwiseClient({ baseUrl: served.url, timeoutMs: 30_000, onWarning: (w) => warnings.push(w) });
});
after(async () => served.close());

test("stock: without the middleware the model gets no memory at all", async () => {
  const model = mockModel();
  const prompt = await received(model, model, [{ role: "user", content: DRINK }]);
  assert.doesNotMatch(prompt, /user_context|flat white/);
});

test("gated: the chit-chat turn passes through unchanged", async () => {
  const model = mockModel();
  const wrapped = wrapLanguageModel({ model, middleware: recallwiseMiddleware(client, { actorId: ACTOR }) });
  const plain = mockModel();
  const expected = await received(plain, plain, [{ role: "user", content: HELLO }]);
  const prompt = await received(model, wrapped, [{ role: "user", content: HELLO }]);
  assert.equal(prompt, expected); // exactly what the model would have received without the middleware
  assert.equal(client.stats.recalls, 1);
  assert.equal(client.stats.injected, 0);
});

test("gated: the drink turn gets the flat white and not the aisle seat; the caller's messages stay clean", async () => {
  const model = mockModel();
  const wrapped = wrapLanguageModel({ model, middleware: recallwiseMiddleware(client, { actorId: ACTOR }) });
  const messages: ModelMessage[] = [
    { role: "user", content: HELLO },
    { role: "assistant", content: "Hi! How can I help?" },
    { role: "user", content: DRINK },
  ];
  const before = JSON.stringify(messages);
  const prompt = await received(model, wrapped, messages);
  assert.match(prompt, /decaf oat flat white/);
  assert.doesNotMatch(prompt, /aisle/i);
  assert.match(prompt, new RegExp(DRINK.replace(/[?]/g, "\\?")));
  assert.equal(JSON.stringify(messages), before); // history is the caller's, untouched
});

test("the service's stock arm through the middleware injects the aisle seat too (the control)", async () => {
  const model = mockModel();
  const wrapped = wrapLanguageModel({ model, middleware: recallwiseMiddleware(client, { actorId: ACTOR, stock: true }) });
  const prompt = await received(model, wrapped, [{ role: "user", content: DRINK }]);
  assert.match(prompt, /flat white/);
  assert.match(prompt, /aisle seat/);
});

test("a killed service fails open: the call goes out unchanged, one counted warning", async () => {
  await served.kill();
  const model = mockModel();
  const wrapped = wrapLanguageModel({ model, middleware: recallwiseMiddleware(client, { actorId: ACTOR }) });
  const result = await generateText({ model: wrapped, messages: [{ role: "user", content: DRINK }] });
  assert.equal(result.text, "ok");
  assert.doesNotMatch(textOf(model.doGenerateCalls[0]?.prompt), /user_context/);
  assert.equal(client.stats.failedOpen, 1);
  assert.equal(warnings.length, 1);
});

test("the middleware needs an actor id", () => {
  assert.throws(() => recallwiseMiddleware(client, { actorId: "" }), /actorId/);
});
