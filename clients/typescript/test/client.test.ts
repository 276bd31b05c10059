/** The client against a real `recallwise serve`: recall, judge, writes, errors, failing open. */

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { after, before, test } from "node:test";
import { RecallwiseClient, RecallwiseError, type RecallwiseWarning } from "../src/index.js";
import { ACTOR, DRINK, HELLO, serve, type Served } from "./server.js";

let served: Served;
let client: RecallwiseClient;
const warnings: RecallwiseWarning[] = [];

before(async () => {
  served = await serve();
  client = new RecallwiseClient({ baseUrl: served.url, timeoutMs: 30_000, onWarning: (w) => warnings.push(w) });
});
after(async () => served.close());

test("the chit-chat turn recalls nothing", async () => {
  const result = await client.recall(ACTOR, HELLO);
  assert.equal(result.failed, false);
  assert.equal(result.gated, true);
  assert.equal(result.gate_open, false);
  assert.equal(result.context, "");
  assert.deepEqual(result.records, []);
});

test("the drink turn recalls the flat white and not the aisle seat", async () => {
  const result = await client.recall(ACTOR, DRINK);
  assert.equal(result.failed, false);
  assert.match(result.context, /decaf oat flat white/);
  assert.doesNotMatch(result.context, /aisle/i);
  assert.ok(result.records.every((r) => typeof r.judge_p === "number"));
});

test("the stock arm retrieves the aisle seat too", async () => {
  const result = await client.recall(ACTOR, DRINK, { stock: true });
  assert.equal(result.gated, false);
  assert.match(result.context, /flat white/);
  assert.match(result.context, /aisle seat/);
});

test("judge keeps the coffee and drops the seat, by the caller's ids", async () => {
  const result = await client.judge(ACTOR, DRINK, [
    { text: "Always books an aisle seat on flights", id: "seat" },
    { text: "Go-to coffee order is a decaf oat flat white", id: "coffee" },
  ]);
  assert.equal(result.failed, false);
  assert.deepEqual(result.kept, [1]);
  assert.deepEqual(
    result.candidates.map((c) => [c.id, c.kept]),
    [
      ["seat", false],
      ["coffee", true],
    ],
  );
});

test("the decision log lists the turns, and a label comes back in the fit format", async () => {
  await client.recall(ACTOR, DRINK, { sessionId: "ts-inspector" });
  const page = await client.decisions({ sessionId: "ts-inspector", limit: 5 });
  assert.equal(page.content_logged, true);
  assert.equal(page.decisions.length, 1);
  const [turn] = page.decisions;
  assert.ok(turn);
  assert.equal(turn.message, DRINK);
  assert.equal(turn.gate_open, true);
  const kept = turn.candidates.find((c) => c.kept);
  const dropped = turn.candidates.find((c) => !c.kept);
  assert.ok(kept && dropped && kept.reason && dropped.reason);
  assert.deepEqual((await client.decision(turn.id)).id, turn.id);
  const labelled = await client.addLabels({ decision_id: turn.id, gate: true, records: { [dropped.id]: false } });
  assert.deepEqual(
    { decision_id: labelled.decision_id, text: labelled.text, label: labelled.label, records: labelled.records },
    { decision_id: turn.id, text: DRINK, label: true, records: [{ id: dropped.id, text: dropped.text, label: false }] },
  );
  const { labels } = await client.labels({ sessionId: "ts-inspector" });
  assert.deepEqual(labels, [labelled]);
  await assert.rejects(client.addLabels({ decision_id: turn.id, records: { "no-such-record": true } }), (error) => {
    assert.ok(error instanceof RecallwiseError);
    assert.equal(error.status, 422);
    return true;
  });
  // one labelled turn is too few to refit a head: the service says so
  await assert.rejects(client.refitPreview("gate"), (error) => {
    assert.ok(error instanceof RecallwiseError);
    assert.equal(error.status, 422);
    assert.match(error.message, /cannot preview a gate refit: .*a head needs both classes/);
    return true;
  });
});

test("records and events round trip; forget deletes them", async () => {
  const actor = "ts_roundtrip";
  const added = await client.addRecords(actor, [{ text: "The user keeps bees.", namespace: "/facts/{actorId}" }]);
  assert.equal(added.added, 1);
  const events = await client.addEvents(actor, [{ text: "I moved to Porto last month." }], { sessionId: "s1" });
  assert.equal(events.events, 1);
  const page = await client.listRecords(actor, { limit: 100 });
  assert.ok(page.records.some((r) => r.text === "The user keeps bees."));
  const id = added.records[0]!.id;
  assert.deepEqual(await client.deleteRecord(id), { deleted: 1, id });
  await assert.rejects(client.deleteRecord(id), (e: unknown) => e instanceof RecallwiseError && e.status === 404);
  const forgot = await client.forget(actor);
  assert.equal(forgot.actor_id, actor);
  assert.equal((await client.listRecords(actor)).total, 0);
});

test("a bad write throws a RecallwiseError naming the field", async () => {
  await assert.rejects(
    client.addRecords("../escape", [{ text: "x" }]),
    (e: unknown) => e instanceof RecallwiseError && e.status === 422 && e.field === "actor_id",
  );
});

test("a bad argument to the constructor is a clear TypeError", () => {
  assert.throws(() => new RecallwiseClient({ baseUrl: "localhost:8080" }), /baseUrl must be an http/);
  assert.throws(() => new RecallwiseClient({ baseUrl: "http://x", timeoutMs: 0 }), /timeoutMs/);
});

test("a slow service fails open: no memories, one counted warning", async () => {
  const hanging: Server = createServer(() => {
    /* never answers */
  });
  await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", r));
  const address = hanging.address();
  assert.ok(address && typeof address === "object");
  const seen: RecallwiseWarning[] = [];
  const slow = new RecallwiseClient({
    baseUrl: `http://127.0.0.1:${address.port}`,
    timeoutMs: 100,
    onWarning: (w) => seen.push(w),
  });
  try {
    const result = await slow.recall(ACTOR, DRINK);
    assert.equal(result.failed, true);
    assert.equal(result.context, "");
    assert.equal(slow.stats.failures.timeout, 1);
    assert.equal(slow.stats.failedOpen, 1);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.error.kind, "timeout");
    const judged = await slow.judge(ACTOR, DRINK, [{ text: "a" }, { text: "b" }]);
    assert.equal(judged.failed, true);
    assert.deepEqual(judged.kept, [0, 1]); // the judge fails open: keep everything
    assert.equal(slow.stats.failedOpen, 2);
  } finally {
    hanging.closeAllConnections();
    await new Promise((r) => hanging.close(r));
  }
});

test("a killed service fails open and says so", async () => {
  await served.kill();
  const before = client.stats.failedOpen;
  const result = await client.recall(ACTOR, DRINK);
  assert.equal(result.failed, true);
  assert.equal(result.context, "");
  assert.equal(result.error_kinds[0], "network");
  assert.equal(client.stats.failedOpen, before + 1);
  assert.equal(client.stats.failures.network, 1);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.fallback, /no memories/);
});
