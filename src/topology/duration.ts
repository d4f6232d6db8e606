// TopologySource durations (maxStaleness, pollInterval, timeout) for the dry run.
import { parseDuration as parseConfigDuration } from "../duration/index.js";

/**
 * A duration in milliseconds ("30s", "5m", "1h30m", "250ms"), or undefined when the text is not
 * one: the operator's own parser (src/duration), so that the dry run and the operator accept
 * the same TopologySource durations.
 */
export function parseDuration(text: string): number | undefined {
  try {
    return parseConfigDuration(text, "duration", { minMs: 0 });
  } catch {
    return undefined;
  }
}
