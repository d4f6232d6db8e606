// The simulated world: an event loop in virtual time, one simulated Ollama per GPU, and the
// scenario's traffic — discussions whose selected agents make calls, think, and call again.
// Where a call runs is the policy's choice (./policies); what happened is the recorder's.

import { GPU_WAIT_LIMIT_S, inTolerance, type RefusalReason } from "../core/index.js";
import {
  CHARS_PER_TOKEN,
  EMPTY_CHAIN,
  extendChain,
  type JobResult,
  type PromptChain,
  reusable,
} from "../emulator/index.js";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { Rng } from "../prng/index.js";
import { generateAgentLoops } from "./agent-loops.js";
import { EventLoop } from "./events.js";
import { SimFixedEngine } from "./fixed-engine.js";
import { modelWithFootprint, SimOllama } from "./ollama.js";
import { Recorder } from "./recorder.js";
import type { Scenario, ScenarioModel } from "./scenarios.js";
import {
  type CallRecord,
  type CallState,
  EPOCH_MS,
  type SimOptions,
  type SimPrompt,
  type TurnState,
} from "./types.js";
import { type Discussion, generateWorkload } from "./workload.js";

/** What a policy decides for the world: where each call runs. */
export interface SimPolicy {
  /** Before the traffic starts (initial probes, static bindings). */
  start(): void;
  /** An agent's turn in a discussion begins, and ends. */
  turnStarted(ts: TurnState): void;
  turnEnded(ts: TurnState): void;
  /** A call arrives: run it on a GPU (World.runCall), make it wait, or stand it aside. */
  dispatch(call: CallState): void;
  /** A GPU's runners changed. */
  gpuChanged(g: SimOllama): void;
  /** After every event of the loop; the loop waits for it. */
  afterEvent(): void | Promise<void>;
  /** After the run: throws what went wrong inside the policy, if anything did. */
  finish?(): void;
  /** The policy's live tickets for a model on a provider (for unload records). */
  liveTickets(provider: string, model: string): number;
}

export class World {
  readonly sc: Scenario;
  readonly loop = new EventLoop();
  /** The Ollama cards. */
  readonly gpus: SimOllama[] = [];
  readonly gpuByName = new Map<string, SimOllama>();
  /** The fixed-model engines (a mixed fleet), in scenario order. */
  readonly engines: SimFixedEngine[] = [];
  readonly engineByName = new Map<string, SimFixedEngine>();
  readonly models: Map<string, ScenarioModel>;
  readonly recorder: Recorder;
  readonly rng: Rng;
  private policy: SimPolicy | undefined;
  private callSeq = 0;
  /** Discussions not started yet plus turns not ended: the publisher probes while any remain. */
  private outstanding = 0;
  /** Per model, every prefix (chain mark) some call evaluated or generated: the oracle's cache. */
  private readonly computed = new Map<string, Set<string>>();

  constructor(readonly o: SimOptions) {
    this.sc = o.scenario;
    this.recorder = new Recorder(
      o.record ?? false,
      o.measure ?? true,
      (o.waitLimitS ?? GPU_WAIT_LIMIT_S) * 1000,
    );
    this.rng = new Rng(o.seed).fork(`${this.sc.name}/policy/${o.policy}`);
    this.models = new Map(this.sc.models.map((m) => [m.name, m]));
    // A model a fixed-model engine serves is that engine's own: no Ollama card has it on disk.
    const engineModels = new Set(this.sc.gpus.flatMap((g) => g.fixed?.serves ?? []));
    const catalog = this.sc.models
      .filter((m) => !engineModels.has(m.name))
      .map((m) => modelWithFootprint(m.name, m.footprintMiB, this.sc.contextLength, this.sc.numParallel));
    for (const g of this.sc.gpus) {
      if (g.fixed !== undefined) {
        const e = new SimFixedEngine(this.loop, {
          name: g.name,
          ...g.fixed,
          contextLength: this.sc.contextLength,
          vramMiB: g.vramMiB,
        });
        this.engines.push(e);
        this.engineByName.set(g.name, e);
        continue;
      }
      const gpu = new SimOllama(
        this.loop,
        {
          name: g.name,
          vramMiB: g.vramMiB,
          numParallel: this.sc.numParallel,
          contextLength: this.sc.contextLength,
          models: catalog,
          // One prompt token per ms: a call of d ms is d tokens of prompt evaluation (agent
          // loops' cards give their own rates).
          promptTokensPerS: g.promptTokensPerS ?? 1000,
          ...(g.tokensPerS !== undefined ? { tokensPerS: g.tokensPerS } : {}),
          maxLoadedModels: o.maxLoadedModels ?? 3,
        },
        {
          onLoadStart: (gp, model, mib) => this.recorder.loadStarted(this.loop.now, gp.name, model, mib),
          onUnload: (gp, model, cause, mib) =>
            this.recorder.unloaded({
              atMs: this.loop.now,
              provider: gp.name,
              model,
              cause,
              footprintMiB: mib,
              liveTickets: this.recorder.detailed ? this.policyOf().liveTickets(gp.name, model) : 0,
            }),
          onChange: (gp) => this.policyOf().gpuChanged(gp),
        },
        EPOCH_MS,
      );
      this.gpus.push(gpu);
      this.gpuByName.set(g.name, gpu);
    }
    this.loop.onAfterEach(() => this.policy?.afterEvent());
  }

  /** Every provider: the Ollama cards, then the fixed-model engines (the order states are published in). */
  get providers(): Array<SimOllama | SimFixedEngine> {
    return [...this.gpus, ...this.engines];
  }

  /** The card or engine of that name. */
  provider(name: string): SimOllama | SimFixedEngine | undefined {
    return this.gpuByName.get(name) ?? this.engineByName.get(name);
  }

  /** Whether traffic remains (discussions to start or turns to end). */
  get busy(): boolean {
    return this.outstanding > 0;
  }

  async run(policy: SimPolicy) {
    this.policy = policy;
    const work =
      this.sc.loops !== undefined
        ? generateAgentLoops(this.sc, this.o.seed)
        : generateWorkload(this.sc, this.o.seed);
    this.outstanding = work.length;
    for (const d of work) {
      for (const t of d.turns) {
        const pm = this.models.get(t.agent.candidates[0]!.model);
        for (const c of t.calls) this.recorder.idealMs.push((pm?.serviceMeanS ?? 0) * 1000 * c.workFactor);
      }
      this.loop.at(d.atMs, () => this.startDiscussion(d));
    }
    for (const g of this.sc.gpus) {
      const gpu = this.gpuByName.get(g.name);
      for (const model of g.preload ?? []) {
        gpu?.submit(
          { model, kind: "load", promptTokens: 0, outputTokens: 0, keepAliveMs: Number.POSITIVE_INFINITY },
          {
            onDone: () => {},
            onError: (m) => {
              throw new KubemootError(ErrorCode.Internal, `sim: ${g.name} could not preload ${model}: ${m}`);
            },
          },
        );
      }
    }
    policy.start();
    // Runs until every call has finished (a safety horizon guards against a run that never drains).
    const horizon = this.sc.arrivalWindowS * 1000 * 50;
    await this.loop.run(horizon);
    policy.finish?.();
    return this.recorder.result(
      this.sc.name,
      this.o.policy,
      this.o.seed,
      this.providers,
      this.loop.processed,
    );
  }

  /** Service time of the call on `model` (ms). */
  serviceMs(call: CallState, model: string): number {
    const m = this.models.get(model);
    return (m?.serviceMeanS ?? 0) * 1000 * call.turn.turn.calls[call.index]!.workFactor;
  }

  /** Runs the call on `gpu`; `ended` runs first when it finishes (with its result) or fails. */
  runCall(
    call: CallState,
    gpu: SimOllama | SimFixedEngine,
    model: string,
    ended: (ok: boolean, result?: JobResult) => void,
  ): void {
    call.record.model = model;
    call.record.provider = gpu.name;
    const done = (r: JobResult) => {
      ended(true, r);
      this.completed(call, r);
    };
    const failed = () => {
      ended(false);
      this.failed(call);
    };
    if (call.prompt !== undefined) {
      if (gpu instanceof SimFixedEngine)
        throw new KubemootError(ErrorCode.Internal, "sim: agent loops run on Ollama cards only");
      gpu.runPrompt(model, call.prompt, done, failed);
      return;
    }
    const ms = this.serviceMs(call, model);
    if (gpu instanceof SimFixedEngine)
      gpu.run(model, ms, done, failed, call.turn.turn.calls[call.index]!.promptTokens);
    else gpu.run(model, ms, done, failed);
  }

  /** The agent stands aside from the discussion: its remaining calls are never made. */
  standAside(call: CallState, reason: RefusalReason): void {
    this.recorder.standAside(reason);
    call.record.outcome = "stand-aside";
    call.record.standAside = reason;
    const ts = call.turn;
    for (let i = ts.next; i < ts.turn.calls.length; i++) {
      this.recorder.calls.push({
        ...this.newRecord(ts, ts.turn.calls[i]!.workFactor),
        arrivalMs: Number.NaN,
      });
    }
    ts.next = ts.turn.calls.length;
    this.endTurn(ts);
  }

  private policyOf(): SimPolicy {
    if (this.policy === undefined)
      throw new KubemootError(ErrorCode.Internal, "sim: the world runs without a policy");
    return this.policy;
  }

  private startDiscussion(d: Discussion): void {
    this.outstanding += d.turns.length - 1;
    for (const turn of d.turns) {
      const ts: TurnState = {
        discussion: d,
        turn,
        agent: turn.agent,
        acceptable: inTolerance(turn.agent.candidates, this.sc.tolerance),
        next: 0,
        ended: false,
      };
      this.policyOf().turnStarted(ts);
      this.loop.at(this.loop.now + turn.startOffsetMs, () => this.nextCall(ts));
    }
  }

  private newRecord(ts: TurnState, workFactor: number): CallRecord {
    const preferred = ts.agent.candidates[0]!.model;
    const pm = this.models.get(preferred);
    return {
      id: `c${++this.callSeq}`,
      discussion: ts.discussion.id,
      agent: ts.agent.id,
      preferred,
      model: "",
      provider: "",
      arrivalMs: this.loop.now,
      doneMs: Number.NaN,
      latencyMs: Number.NaN,
      idealMs: (pm?.serviceMeanS ?? 0) * 1000 * workFactor,
      coldLoad: false,
      outcome: "dropped",
    };
  }

  private nextCall(ts: TurnState): void {
    const i = ts.next++;
    const rec = this.newRecord(ts, ts.turn.calls[i]!.workFactor);
    this.recorder.calls.push(rec);
    const prompt = this.promptOf(ts, i);
    const call: CallState = { id: rec.id, turn: ts, index: i, arrivalMs: this.loop.now, record: rec };
    if (prompt !== undefined) call.prompt = prompt;
    this.policyOf().dispatch(call);
  }

  /** An agent loop's turn as its engine's cache and its sidecar see the prompt. */
  private promptOf(ts: TurnState, i: number): SimPrompt | undefined {
    const planned = ts.turn.calls[i]!;
    const p = planned.prompt;
    if (p === undefined) return undefined;
    const chain = extendChain(
      EMPTY_CHAIN,
      p.parts.map((x) => ({ text: x.key, tokens: x.tokens })),
    );
    const tokens = chain.tokens.at(-1) ?? 0;
    const seen = this.computed.get(ts.agent.candidates[0]!.model);
    let shared = 0;
    chain.hashes.forEach((h, k) => {
      if (seen?.has(h)) shared = chain.tokens[k]!;
    });
    return {
      conversation: p.conversation,
      chain,
      answer: { text: p.answer.key, tokens: p.answer.tokens },
      marks: {
        hashes: chain.hashes,
        chars: chain.tokens.map((t) => Math.round(t * CHARS_PER_TOKEN)),
        assistant: p.parts.map((x) => x.assistant),
      },
      tokens,
      chars: Math.round(tokens * CHARS_PER_TOKEN),
      outputTokens: planned.outputTokens ?? 0,
      availableTokens: reusable(shared, tokens),
    };
  }

  /** The oracle's cache learns a finished turn's prompt and answer. */
  private computedBy(model: string, chain: PromptChain): void {
    let seen = this.computed.get(model);
    if (seen === undefined) {
      seen = new Set();
      this.computed.set(model, seen);
    }
    for (const h of chain.hashes) seen.add(h);
  }

  /** After a call ended (done or failed): the agent thinks, then calls again, or its turn ends. */
  private afterCall(call: CallState): void {
    const ts = call.turn;
    if (ts.next < ts.turn.calls.length) {
      const think = ts.turn.calls[ts.next]!.thinkMs;
      this.loop.at(this.loop.now + think, () => this.nextCall(ts));
    } else {
      this.endTurn(ts);
    }
  }

  private endTurn(ts: TurnState): void {
    if (ts.ended) return;
    ts.ended = true;
    this.outstanding--;
    this.policyOf().turnEnded(ts);
  }

  private completed(call: CallState, r: JobResult): void {
    const rec = call.record;
    rec.outcome = "done";
    rec.doneMs = this.loop.now;
    rec.latencyMs = this.loop.now - call.arrivalMs;
    rec.coldLoad = r.coldLoad;
    const p = call.prompt;
    if (p !== undefined) {
      // The first token comes one token's time after the prompt was evaluated.
      const perToken = r.evalTokens > 0 ? r.evalMs / r.evalTokens : 0;
      rec.prompt = {
        tokens: r.promptTokens,
        cachedTokens: r.cachedTokens,
        availableTokens: p.availableTokens,
        prefillMs: r.promptEvalMs,
        ttftMs: rec.latencyMs - r.evalMs + perToken,
      };
      this.computedBy(rec.model, extendChain(p.chain, [p.answer]));
    }
    this.recorder.done(this.loop.now);
    this.afterCall(call);
  }

  private failed(call: CallState): void {
    call.record.outcome = "failed";
    call.record.doneMs = this.loop.now;
    this.afterCall(call);
  }
}
