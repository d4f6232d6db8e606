// The file source: a directory (or several) of YAML/JSON manifests, read like the `bind` dry
// run reads them and kept current by watching.
//
// - fs.watch (recursive on directories; Node 20 supports that on Linux) with a trailing
//   debounce, so an editor's burst of writes becomes one rescan;
// - a periodic rescan (default every 5 s) so that missed events (network filesystems, a
//   watcher that died, a directory replaced wholesale) heal;
// - a rescan re-reads every file, but the snapshot only changes (and listeners only hear of
//   it) when some file's text did.
//
// Invalid documents are logged with file, document and field and skipped; everything else
// still binds. A rescan that fails as a whole (the directory vanished) keeps the last good
// objects: a transient mistake must not unbind a crew.
import { createHash } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, resolve, sep } from "node:path";
import type { ClusterSnapshot } from "../../binding/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { type Logger, silentLogger } from "../../log/index.js";
import { formatIssue, type ManifestIssue, manifestFiles } from "../../manifests/index.js";
import { emptyManifestSet, type ManifestSet, parseManifests, toSnapshot } from "../manifests/index.js";
import { providerInfos } from "./providers.js";
import type { ChangeListener, ManifestSource, ProviderInfo } from "./types.js";

export const DEFAULT_DEBOUNCE_MS = 100;
export const DEFAULT_RESCAN_MS = 5_000;

export interface FileSourceOptions {
  /** Directories (read recursively) or files; `--manifests`, repeatable. */
  paths: readonly string[];
  /** Paths never read, e.g. the binding output directory when it lies under a manifests path. */
  ignore?: readonly string[];
  /** Trailing debounce of watch events; default 100 ms. */
  debounceMs?: number;
  /** Periodic rescan; default 5 s; 0 turns it off. */
  rescanMs?: number;
  /** fs.watch the paths; default true. */
  watch?: boolean;
  logger?: Logger;
}

export class FileManifestSource implements ManifestSource {
  readonly kind = "files";
  readonly statusAuthority = "reconciler" as const;
  private readonly paths: string[];
  private readonly ignore: string[];
  private readonly debounceMs: number;
  private readonly rescanMs: number;
  private readonly useWatch: boolean;
  private readonly log: Logger;

  private set: ManifestSet = emptyManifestSet();
  private currentIssues: ManifestIssue[] = [];
  private fingerprint: string | undefined;
  private listener: ChangeListener | undefined;
  private watchers = new Map<string, FSWatcher>();
  private debounce: NodeJS.Timeout | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> = Promise.resolve();
  private stopped = false;
  private scans = 0;

  constructor(options: FileSourceOptions) {
    if (options.paths.length === 0)
      throw new KubemootError(
        ErrorCode.InvalidConfig,
        "file source: at least one manifests path is required",
      );
    this.paths = options.paths.map((p) => resolve(p));
    this.ignore = (options.ignore ?? []).map((p) => resolve(p));
    this.debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.rescanMs = options.rescanMs ?? DEFAULT_RESCAN_MS;
    this.useWatch = options.watch ?? true;
    this.log = options.logger ?? silentLogger;
  }

  /** Reads everything once (throws when a path does not exist), then watches. */
  async start(onChange: ChangeListener): Promise<void> {
    await this.scanNow("initial", true);
    this.listener = onChange;
    if (this.useWatch) await this.ensureWatchers();
    if (this.rescanMs > 0) this.scheduleRescan();
  }

  snapshot(): ClusterSnapshot {
    return toSnapshot(this.set);
  }

  providers(): ProviderInfo[] {
    return providerInfos(this.set.providers);
  }

  /** The invalid documents of the last scan. */
  issues(): readonly ManifestIssue[] {
    return this.currentIssues;
  }

  /** How many times the files were read (for tests and metrics). */
  get scanCount(): number {
    return this.scans;
  }

  resync(): Promise<void> {
    return this.enqueueScan("resync");
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listener = undefined;
    if (this.debounce) clearTimeout(this.debounce);
    if (this.rescanTimer) clearTimeout(this.rescanTimer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.scanning.catch(() => undefined);
  }

  // ---- scanning -------------------------------------------------------------------------

  private enqueueScan(reason: string): Promise<void> {
    const next = this.scanning.then(() => this.scanNow(reason, false));
    this.scanning = next.catch(() => undefined);
    return next;
  }

  private async scanNow(reason: string, initial: boolean): Promise<void> {
    if (this.stopped) return;
    let texts: { file: string; text: string }[];
    try {
      texts = await this.readAll();
    } catch (err) {
      if (initial) throw err;
      this.log.error(
        { err, paths: this.paths },
        "manifests: rescan failed; keeping the objects of the last good scan",
      );
      return;
    }
    this.scans += 1;
    const hash = createHash("sha256");
    for (const t of texts) hash.update(t.file).update("\0").update(t.text).update("\0");
    const fingerprint = hash.digest("hex");
    if (fingerprint === this.fingerprint) return;
    this.fingerprint = fingerprint;

    const { set, issues } = parseManifests(texts);
    const before = new Set(this.currentIssues.map(formatIssue));
    for (const issue of issues) {
      const text = formatIssue(issue);
      if (before.has(text)) continue;
      this.log.warn(
        {
          file: issue.file,
          document: issue.document,
          ...(issue.kind ? { kind: issue.kind } : {}),
          ...(issue.object ? { object: issue.object } : {}),
          field: issue.field,
        },
        `invalid manifest skipped: ${text}`,
      );
    }
    this.set = set;
    this.currentIssues = issues;
    this.log.info(
      {
        reason,
        files: texts.length,
        models: set.models.length,
        providers: set.providers.length,
        agents: set.agents.length,
        policies: set.policies.length,
        archetypes: set.archetypes.length,
        invalid: issues.length,
      },
      "manifests read",
    );
    if (!initial) this.listener?.(`manifests changed (${reason})`);
  }

  private async readAll(): Promise<{ file: string; text: string }[]> {
    const files = (await manifestFiles(this.paths)).filter((f) => !this.ignored(resolve(f)));
    const out: { file: string; text: string }[] = [];
    for (const file of files) {
      try {
        out.push({ file, text: await readFile(file, "utf8") });
      } catch (err) {
        // Deleted between listing and reading: the next event or rescan sees the final state.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
    return out;
  }

  private ignored(path: string): boolean {
    return this.ignore.some((dir) => path === dir || path.startsWith(dir + sep));
  }

  // ---- watching -------------------------------------------------------------------------

  private scheduleRescan(): void {
    this.rescanTimer = setTimeout(() => {
      void (async () => {
        if (this.useWatch) await this.ensureWatchers();
        await this.enqueueScan("periodic rescan");
        if (!this.stopped) this.scheduleRescan();
      })();
    }, this.rescanMs);
  }

  private onEvent(watched: string, filename: string | Buffer | null): void {
    if (this.stopped) return;
    if (filename !== null) {
      const name = filename.toString();
      const full = resolve(watched, name);
      if (this.ignored(full)) return;
    }
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.enqueueScan("file change");
    }, this.debounceMs);
  }

  /** One watcher per path: the directory (recursively), or a file's directory filtered to it. */
  private async ensureWatchers(): Promise<void> {
    for (const path of this.paths) {
      if (this.stopped || this.watchers.has(path)) continue;
      let isDir: boolean;
      try {
        isDir = (await stat(path)).isDirectory();
      } catch {
        continue; // gone; the rescan logs it and retries the watcher next time
      }
      const target = isDir ? path : dirname(path);
      const only = isDir ? undefined : basename(path);
      try {
        const w = watch(target, { recursive: isDir }, (_event, filename) => {
          if (only !== undefined && filename !== null && filename.toString() !== only) return;
          this.onEvent(target, filename);
        });
        w.on("error", (err) => {
          this.log.warn({ err, path }, "manifests: watcher failed; relying on periodic rescans");
          w.close();
          if (this.watchers.get(path) === w) this.watchers.delete(path);
        });
        this.watchers.set(path, w);
      } catch (err) {
        this.log.warn({ err, path }, "manifests: cannot watch; relying on periodic rescans");
      }
    }
  }
}
