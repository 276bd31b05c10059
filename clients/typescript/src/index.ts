/**
 * recallwise: a typed client for `recallwise serve` (gate, route and judge an agent's memory).
 * Framework adapters live in subpaths: `recallwise/strands` (Strands Agents TS) and `recallwise/ai`
 * (Vercel's AI SDK), so this entry point needs nothing but `fetch`.
 *
 * @module
 */

export { RecallwiseClient, RecallwiseError } from "./client.js";
export type {
  FailureKind,
  JudgeResult,
  RecallRequest,
  RecallResult,
  RecallwiseClientOptions,
  RecallwiseStats,
  RecallwiseWarning,
} from "./client.js";
export type * from "./types.js";
