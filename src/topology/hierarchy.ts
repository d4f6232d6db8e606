// Tree checks shared by snapshot validation and nodeLabels sources: every level on a node has
// all its coarser levels, and one (level, value) never sits under two different parent tuples
// (two racks called "r1" in two zones would merge into one domain).

export interface TreeProblem {
  reason: "MissingParent" | "ConflictingParent";
  message: string;
}

/** The first level on some node without a coarser level, in node order. */
export function missingParent(
  levels: readonly string[],
  records: Iterable<readonly [string, Readonly<Record<string, string>>]>,
): TreeProblem | undefined {
  for (const [node, rec] of records) {
    let deepest = -1;
    for (let i = levels.length - 1; i >= 0; i--) {
      if (rec[levels[i]!] !== undefined) {
        deepest = i;
        break;
      }
    }
    for (let i = 0; i < deepest; i++) {
      if (rec[levels[i]!] === undefined) {
        const child = levels[deepest]!;
        return {
          reason: "MissingParent",
          message: `node ${node}: level ${child}=${rec[child]} has no value for its parent level ${levels[i]}`,
        };
      }
    }
  }
  return undefined;
}

/** The first (level, value) found under two different parent tuples. */
export function conflictingParent(
  levels: readonly string[],
  records: Iterable<readonly [string, Readonly<Record<string, string>>]>,
): TreeProblem | undefined {
  const seen = new Map<string, { node: string; parents: string[] }>();
  for (const [node, rec] of records) {
    for (let i = 1; i < levels.length; i++) {
      const value = rec[levels[i]!];
      if (value === undefined) break;
      const parents = levels.slice(0, i).map((l) => rec[l] ?? "");
      const id = `${levels[i]}\0${value}`;
      const first = seen.get(id);
      if (!first) {
        seen.set(id, { node, parents });
        continue;
      }
      if (first.parents.some((p, j) => p !== parents[j])) {
        return {
          reason: "ConflictingParent",
          message:
            `level ${levels[i]}=${value} is under two parent tuples: ` +
            `[${first.parents.join(", ")}] (node ${first.node}) and [${parents.join(", ")}] (node ${node})`,
        };
      }
    }
  }
  return undefined;
}

/** Both checks, missing parents first (the spec's order). */
export function treeProblem(
  levels: readonly string[],
  records: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]>,
): TreeProblem | undefined {
  return missingParent(levels, records) ?? conflictingParent(levels, records);
}
