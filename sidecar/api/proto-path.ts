import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's proto/ directory, found from this module (works from src and dist). */
export function protoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, "proto");
    if (existsSync(path.join(candidate, "kubemoot", "scheduler", "v1", "scheduler.proto"))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error("proto/kubemoot/scheduler/v1/scheduler.proto not found above the sidecar module");
}
