import { existsSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../src/repo-root.js";

/** The repository's proto/ directory (reflection serves the .proto files found there). */
export function protoRoot(): string {
  const dir = path.join(repoRoot(), "proto");
  if (!existsSync(path.join(dir, "kubemoot", "scheduler", "v1", "scheduler.proto"))) {
    throw new Error(
      `${dir}/kubemoot/scheduler/v1/scheduler.proto not found: proto/ must ship with the sidecar`,
    );
  }
  return dir;
}
