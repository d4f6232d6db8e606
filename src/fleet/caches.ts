// The process-wide caches (compiled CEL, member matches by content) can be dropped, e.g. for a
// benchmark's cold start. Placement results never depend on them.
import { clearCompiled } from "./cel.js";
import { clearMatches } from "./pools.js";

export function clearFleetCaches(): void {
  clearCompiled();
  clearMatches();
}
