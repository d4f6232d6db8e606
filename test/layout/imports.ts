// Reads the repository's TypeScript imports (static, dynamic and `import("…")` types) with the
// TypeScript parser, and builds the folder-level graph the layout tests check. Pure reading of
// files: nothing is compiled or run.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import ts from "typescript";
import { repoRoot } from "../../src/repo-root.js";

export const ROOT = repoRoot();

export interface Import {
  /** Repository-relative path of the importing file. */
  from: string;
  /** The specifier as written. */
  specifier: string;
  /** Repository-relative path of the imported file, for a relative import; undefined otherwise. */
  target?: string;
  /** A Node built-in (`node:fs`, `fs`); false for an npm package or a relative import. */
  builtin: boolean;
}

const SKIP_DIRS = new Set(["node_modules", "dist", ".git"]);

/** Every .ts file under the given repository-relative folders, repository-relative and sorted. */
export function tsFiles(folders: readonly string[], skip: readonly string[] = []): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    if (skip.includes(rel)) return;
    for (const entry of readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(child);
      } else if (entry.name.endsWith(".ts")) {
        out.push(child);
      }
    }
  };
  for (const f of folders) walk(f);
  return out.sort();
}

export function isTestFile(file: string): boolean {
  return file.endsWith(".test.ts");
}

/** One import form as written: its specifier and the names it takes ("*" for all of them). */
interface ImportForm {
  specifier: string;
  names: readonly string[] | "*";
}

/**
 * Every import form of a file, in any of TypeScript's forms: import and re-export lists,
 * `import * as` and `export *` (all), dynamic `import()` (all), `import("…").X` types and
 * `import x = require(…)` (all).
 */
function importForms(file: string): ImportForm[] {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const kind = file.endsWith(".js") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const out: ImportForm[] = [];
  const add = (node: ts.Node | undefined, names: readonly string[] | "*"): void => {
    if (node && ts.isStringLiteralLike(node)) out.push({ specifier: node.text, names });
  };
  const listed = (elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier>): string[] =>
    elements.map((e) => (e.propertyName ?? e.name).text);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const bindings = node.importClause?.namedBindings;
      const names =
        bindings === undefined ? [] : ts.isNamespaceImport(bindings) ? "*" : listed(bindings.elements);
      add(node.moduleSpecifier, node.importClause?.name ? [] : names);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      add(node.moduleSpecifier, clause && ts.isNamedExports(clause) ? listed(clause.elements) : "*");
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, "*");
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], "*");
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      let q = node.qualifier;
      while (q !== undefined && !ts.isIdentifier(q)) q = q.left;
      add(node.argument.literal, q === undefined ? "*" : [q.text]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The specifiers a file imports or re-exports, in any of TypeScript's forms. */
export function specifiers(file: string): string[] {
  return importForms(file).map((f) => f.specifier);
}

const BUILTINS = new Set(builtinModules);

/** The repository file a relative specifier of `file` names (`.js` read as its `.ts` source). */
function relativeTarget(file: string, specifier: string): string {
  const abs = path.resolve(path.dirname(path.join(ROOT, file)), specifier);
  return path.relative(ROOT, abs).split(path.sep).join("/").replace(/\.js$/, ".ts");
}

/** The imports of `file`, each resolved to a repository file when relative. */
export function importsOf(file: string): Import[] {
  return specifiers(file).map((specifier) => {
    if (specifier.startsWith("."))
      return { from: file, specifier, target: relativeTarget(file, specifier), builtin: false };
    const builtin = specifier.startsWith("node:") || BUILTINS.has(specifier.split("/")[0]!);
    return { from: file, specifier, builtin };
  });
}

/**
 * The folder a file belongs to in the layout graph: `src/<top>` or `sidecar/<top>` for a file
 * in a subfolder, the file itself for one at the top of src/ or sidecar/ (each such file is its
 * own node, so that two unrelated top-level files do not read as one folder), undefined for
 * files outside src/ and sidecar/.
 */
export function nodeOf(file: string): string | undefined {
  const parts = file.split("/");
  if (parts[0] !== "src" && parts[0] !== "sidecar") return undefined;
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : file;
}

/** Folder-level edges: for each pair of nodes, the first import that links them. */
export type Graph = Map<string, Map<string, Import>>;

export function folderGraph(imports: readonly Import[]): Graph {
  return graphOf(imports, nodeOf);
}

/** File-level edges: for each importing file, the first import of each file it reaches. */
export function fileGraph(imports: readonly Import[]): Graph {
  return graphOf(imports, (file) => file);
}

function graphOf(imports: readonly Import[], node: (file: string) => string | undefined): Graph {
  const graph: Graph = new Map();
  for (const i of imports) {
    const from = node(i.from);
    const to = i.target === undefined ? undefined : node(i.target);
    if (from === undefined || to === undefined || from === to) continue;
    const edges = graph.get(from) ?? new Map<string, Import>();
    if (!edges.has(to)) edges.set(to, i);
    graph.set(from, edges);
  }
  return graph;
}

export interface Cycle {
  /** Every node of the strongly connected component, sorted. */
  nodes: string[];
  /** One cycle through its first node, that node repeated at the end. */
  path: string[];
}

/** One cycle per strongly connected component of more than one node (Tarjan's algorithm). */
export function cycles(graph: Graph): Cycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return components.map((c) => ({ nodes: c.sort(), path: cycleWithin(graph, new Set(c)) }));
}

/** A shortest path from the component's first node (sorted) back to itself, inside it. */
function cycleWithin(graph: Graph, component: Set<string>): string[] {
  const start = [...component].sort()[0]!;
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at: string | undefined = v; at !== start && at !== undefined; at = parent.get(at)) {
          path.push(at);
        }
        return [start, ...path.slice(1).reverse(), start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** `a -> b (a/x.ts imports "../b/y.js") -> …`, one step per line. */
export function describeCycle(graph: Graph, cycle: readonly string[]): string {
  const steps = cycle.slice(1).map((to, i) => {
    const from = cycle[i]!;
    const via = graph.get(from)?.get(to);
    return `  ${from} -> ${to}${via ? ` (${via.from} imports "${via.specifier}")` : ""}`;
  });
  return steps.join("\n");
}

/**
 * The door an import from `from` to `target` must use: the `index.ts` of the outermost folder
 * that holds the target but not the importer, if that folder has one (docs/design.md §3). Undefined
 * when no such folder has an index (top-level files of src/ and sidecar/, a folder's own files).
 */
export function doorOf(from: string, target: string): string | undefined {
  const parts = target.split("/");
  for (let n = 1; n < parts.length; n++) {
    const dir = parts.slice(0, n).join("/");
    if (!from.startsWith(`${dir}/`) && hasIndex(dir)) return `${dir}/index.ts`;
  }
  return undefined;
}

const indexed = new Map<string, boolean>();

function hasIndex(dir: string): boolean {
  let has = indexed.get(dir);
  if (has === undefined) {
    has = existsSync(path.join(ROOT, dir, "index.ts"));
    indexed.set(dir, has);
  }
  return has;
}

/** What one file takes from one repository file: the names, or "*" for all of them. */
export interface NamedImport {
  from: string;
  target: string;
  names: readonly string[] | "*";
}

/**
 * The names each relative import of `file` takes, in every form that can name them: import and
 * re-export lists, `import * as` and `export *` (all), dynamic `import()` (all) and `import("…").X`
 * types. A JavaScript file under bin/ imports the build (`../dist/src/…`); it is mapped back to
 * the source file.
 */
export function namedImportsOf(file: string): NamedImport[] {
  return importForms(file).flatMap(({ specifier, names }) => {
    if (!specifier.startsWith(".")) return [];
    const target = relativeTarget(file, specifier);
    return [
      { from: file, target: target.startsWith("dist/") ? target.slice("dist/".length) : target, names },
    ];
  });
}

/** The names a module exports, `export *` followed, read with TypeScript's checker. */
export function exportedNames(files: readonly string[]): Map<string, string[]> {
  const program = ts.createProgram(
    files.map((f) => path.join(ROOT, f)),
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const out = new Map<string, string[]>();
  for (const f of files) {
    const source = program.getSourceFile(path.join(ROOT, f));
    const symbol = source && checker.getSymbolAtLocation(source);
    out.set(
      f,
      symbol
        ? checker
            .getExportsOfModule(symbol)
            .map((s) => s.name)
            .sort()
        : [],
    );
  }
  return out;
}
