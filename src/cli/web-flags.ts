// --web-listen and --web-token-file (docs/web-view.md), as operator, standalone and demo take
// them: the address (empty: no view) and the token the file holds, checked at start; and
// --web-trace-url, the operator's trace link template, checked at start too.
import { readFileSync } from "node:fs";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { SETTINGS } from "../settings/index.js";
import type { FlagValues } from "./command.js";
import type { WebLaunch } from "./host.js";
import { settingFromFlag } from "./setting-flags.js";

/** The largest token file read (bytes). */
const MAX_TOKEN_FILE = 4096;

export function webLaunchFromFlags(flags: FlagValues): WebLaunch {
  const listen = settingFromFlag(flags, SETTINGS.webListen);
  const file = settingFromFlag(flags, SETTINGS.webTokenFile);
  // "" where the command takes no --web-trace-url (its flags hold none).
  const traceUrl = settingFromFlag(flags, SETTINGS.webTraceUrl);
  const trace = traceUrl ? { traceUrl } : {};
  if (file === undefined) return { listen, ...trace };
  let text: string;
  try {
    const buf = readFileSync(file);
    if (buf.length > MAX_TOKEN_FILE) throw new Error(`over ${MAX_TOKEN_FILE} bytes`);
    text = buf.toString("utf8").trim();
  } catch (err) {
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `--web-token-file: cannot read "${file}": ${err instanceof Error ? err.message : String(err)}`,
      { field: "--web-token-file" },
    );
  }
  return { listen, token: text, ...trace };
}
