// The official TypeScript MCP client (v1.x) over stdio against `recallwise mcp` on the demo persona.
// Needs `recallwise` on PATH (.ci/mcp-node.sh puts the active venv's there).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const dir = mkdtempSync(join(tmpdir(), "recallwise-mcp-node-"));
const store = `sqlite:///${join(dir, "m.db")}`;
let client;

before(async () => {
  const seeded = JSON.parse(execFileSync("recallwise", ["demo", "--json", "--store", store], { encoding: "utf8" }));
  const actor = seeded.actor_id ?? "demo_user";
  client = new Client({ name: "recallwise-node-test", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: "recallwise", args: ["mcp", "--store", store, "--actor", actor], stderr: "ignore" }));
});

after(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("tools are listed, none takes an actor", async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ["forget", "forget_everything", "list_memories", "recall", "remember", "search_memories"]);
  for (const tool of tools) {
    const props = Object.keys(tool.inputSchema.properties ?? {});
    assert.ok(!props.some((p) => p.includes("actor") || p.includes("user")), `${tool.name} takes ${props}`);
    assert.ok(tool.outputSchema, `${tool.name} has no output schema`);
  }
});

test("Hello! recalls nothing; the drink turn recalls the flat white, not the aisle seat", async () => {
  const hello = await client.callTool({ name: "recall", arguments: { message: "Hello!" } });
  assert.equal(hello.isError ?? false, false);
  assert.deepEqual(hello.structuredContent.records, []);
  const drink = await client.callTool({ name: "recall", arguments: { message: "I'd like a drink, what should I get?" } });
  const texts = drink.structuredContent.records.map((r) => r.text.toLowerCase()).join(" ");
  assert.match(texts, /flat white/);
  assert.doesNotMatch(texts, /aisle/);
  assert.ok(drink.structuredContent.context_tokens <= drink.structuredContent.token_budget);
});

test("an unknown record id is an error result naming it; the server still serves", async () => {
  const gone = await client.callTool({ name: "forget", arguments: { record_id: "no-such-record" } });
  assert.equal(gone.isError, true);
  assert.match(gone.content.map((c) => c.text).join(" "), /no-such-record/);
  const page = await client.callTool({ name: "list_memories", arguments: {} });
  assert.ok(page.structuredContent.total > 0);
});
