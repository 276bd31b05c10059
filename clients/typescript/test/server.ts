/**
 * A real `recallwise serve` on loopback for one test file: a store seeded by `recallwise demo`
 * (the demo persona) and the server started from the `recallwise` console script on PATH (the
 * active venv's). Started once per file; `kill()` stops it for the fail-open tests.
 */

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The persona's actor id (the one `recallwise demo` seeds and the checks use). */
export const ACTOR = "demo_user";
/** The persona's chit-chat turn: needs no memory. */
export const HELLO = "Hello!";
/** The persona's memory turn: the drink preferences belong in the prompt, the aisle seat does not. */
export const DRINK = "I'd like a drink, what should I get?";

/** A running server. */
export interface Served {
  url: string;
  /** Stop the process (SIGKILL) and wait until it has exited: the service is dead from then on. */
  kill(): Promise<void>;
  /** Stop it if still running and remove its store. */
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Seed a fresh store with the demo persona and serve it (with a decision log, for the inspector's
 * APIs); resolves once `/readyz` answers 200.
 */
export async function serve(): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), "recallwise-ts-"));
  const store = `sqlite:///${join(dir, "m.db")}`;
  const seeded = spawnSync("recallwise", ["demo", "--json", "--store", store], { encoding: "utf8" });
  if (seeded.error || seeded.status !== 0) {
    throw new Error(
      `recallwise demo failed (is the venv with recallwise active?): ${seeded.error?.message ?? seeded.stderr.slice(-800)}`,
    );
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = join(dir, "decisions.db");
  const child = spawn("recallwise", ["serve", "--store", store, "--port", String(port), "--log", log, "--log-content"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`recallwise serve exited ${child.exitCode}: ${stderr}`);
    try {
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (ready.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > 120_000) {
      child.kill("SIGKILL");
      throw new Error(`recallwise serve not ready in 120 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const kill = async () => {
    child.kill("SIGKILL");
    await stopped(child);
  };
  return {
    url,
    kill,
    close: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every text a model call received, flattened (text blocks, tool results), for assertions. */
export function textOf(value: unknown): string {
  return JSON.stringify(value);
}
