// Ours: the production call loop (src/scheduler) in virtual time. Every agent has its own
// sidecar's Scheduler, configured by the same KUBEMOOT_* variables a sidecar is, over its own
// SchedulerStore of one simulated shared state (./shared-state.ts); each call goes through
// Scheduler.acquire (place, wait on state changes, replan, claim, unload the planned victims)
// exactly as a proxied call does, runs on the GPU it was placed on, and is released with what
// the engine reported, as the proxy releases it. The operator's publisher probes the GPUs
// (./sim-publisher.ts). After every event the loop lets the schedulers' work settle, then
// delivers the state's changes to the waiting calls, as the watches would.
//
// Not modelled: planning at selection (the agents publish their intents and selections, as
// Commit does, but hold no plan and pre-load nothing), the triage phase and cannot-wait static
// fallbacks, engine failures, prompts longer than a context (every scenario's prompts fit), and
// compute shared between two runners on one card (as in the emulator, each loaded model serves
// its own slots at full speed).
import { GPU_WAIT_LIMIT_S } from "../../core/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import {
  type DecisionEvent,
  type PlaceInput,
  type ProviderOps,
  Scheduler,
  type SchedulerStore,
  type SchedulerTimers,
  schedulerConfigFromEnv,
} from "../../scheduler/index.js";
import { SETTINGS } from "../../settings/index.js";
import { SimFixedEngine } from "../fixed-engine.js";
import type { SimOllama } from "../ollama.js";
import { type CallState, EPOCH_MS, type TurnState } from "../types.js";
import type { SimPolicy, World } from "../world.js";
import { decisionRecord } from "./decision-records.js";
import { SharedStateModel } from "./shared-state.js";
import { endpointOf, SimPublisher } from "./sim-publisher.js";

/** Lifetime of a residency overlay after its last write (ms): the tickets bucket's TTL. */
const OVERLAY_TTL_MS = 10 * 60_000;
/** Deliveries of state changes after one event before the loop moves on (a bound, never reached). */
const MAX_DELIVERIES = 64;
/** A signal nobody aborts: simulated agents never hang up. */
const NEVER = new AbortController().signal;

/** Lets every promise the last event set going run to its next wait (there is no I/O here). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface Sidecar {
  scheduler: Scheduler;
  store: SchedulerStore;
}

export class OursPolicy implements SimPolicy {
  private readonly state: SharedStateModel;
  private readonly publisher: SimPublisher;
  private readonly waitLimitS: number;
  private readonly sidecars = new Map<string, Sidecar>();
  /** The call each pending placement is for (the decision records name it). */
  private readonly calls = new Map<PlaceInput, CallState>();
  private readonly timers: SchedulerTimers;
  private readonly ops: ProviderOps;
  /** The first thing that went wrong inside an agent's call; the run fails with it. */
  private failure: unknown;

  constructor(private readonly w: World) {
    this.state = new SharedStateModel(w.loop, w.o.overlayTtlMs ?? OVERLAY_TTL_MS);
    this.publisher = new SimPublisher(w, this.state);
    this.waitLimitS = w.o.waitLimitS ?? GPU_WAIT_LIMIT_S;
    const loop = w.loop;
    this.timers = {
      after: (ms, fn) => loop.at(loop.now + ms, fn),
      sleep: (ms) => new Promise((resolve) => loop.at(loop.now + ms, resolve)),
    };
    this.ops = {
      unload: async (endpoint, model) => this.unload(endpoint, model),
      load: async () => {
        throw new KubemootError(ErrorCode.Internal, "sim: pre-loads (Commit) are not modelled");
      },
    };
  }

  start(): void {
    this.publisher.start();
  }

  turnStarted(ts: TurnState): void {
    const { store } = this.sidecarOf(ts);
    const models = ts.acceptable.map((c) => c.model);
    this.guard(store.demand.putIntents(ts.agent.id, ts.discussion.id, models));
    this.guard(store.demand.recordSelection(ts.agent.crew, ts.agent.id, models));
  }

  turnEnded(ts: TurnState): void {
    this.guard(this.sidecarOf(ts).store.demand.clearThread(ts.discussion.id, ts.agent.id));
  }

  dispatch(call: CallState): void {
    this.guard(this.place(call));
  }

  gpuChanged(g: SimOllama): void {
    this.publisher.changed(g);
  }

  liveTickets(provider: string, model: string): number {
    return this.state.liveTickets(provider, model);
  }

  async afterEvent(): Promise<void> {
    await settle();
    for (let n = 0; n < MAX_DELIVERIES && this.state.deliverChanges(); n++) await settle();
  }

  finish(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  /** One call, as the proxy handles it: acquire a placement, run it there, release it. */
  private async place(call: CallState): Promise<void> {
    const sidecar = this.sidecarOf(call.turn);
    const prompt = call.prompt;
    const input: PlaceInput = {
      agent: call.turn.agent.id,
      threadId: call.turn.discussion.id,
      phase: "mulling",
      candidates: [], // the sidecar's configured list, as the operator bound it
      promptTokens: call.turn.turn.calls[call.index]!.promptTokens,
      promptChars: 0,
      maxOutputTokens: 0,
      cannotWait: false,
    };
    // An agent loop's turn, as the proxy sees a chat: its conversation and its prompt's marks.
    if (prompt !== undefined && this.w.o.policy !== "ours-no-affinity") {
      input.conversation = { id: prompt.conversation, marks: prompt.marks, promptChars: prompt.chars };
    }
    this.calls.set(input, call);
    const got = await sidecar.scheduler.acquire(input, NEVER, this.waitLimitS);
    this.calls.delete(input);
    if (got.kind !== "placed") {
      const reason = got.kind === "refused" ? got.refusal.reason : "gpu-busy";
      // The simulation publishes no per-discussion bindings, so none can say "unschedulable".
      if (reason === "unschedulable")
        throw new KubemootError(ErrorCode.Internal, "sim: a thread binding refused");
      this.w.standAside(call, reason);
      return;
    }
    const p = got.placement;
    const gpu = this.w.provider(p.provider);
    if (gpu === undefined)
      throw new KubemootError(ErrorCode.Internal, `sim: placed on ${p.provider}, not a GPU`);
    const startedMs = this.w.loop.now;
    const renewal = this.renewWhileRunning(sidecar.scheduler, p.ticketId);
    this.w.runCall(call, gpu, p.model, (ok, r) => {
      renewal.cancel();
      // As the proxy reports it: the whole call, and the engine's load time within it.
      const release = sidecar.scheduler.release({
        ticketId: p.ticketId,
        outcome: ok ? "succeeded" : "failed",
        latencyMs: this.w.loop.now - startedMs,
        // What the engine reports of an agent loop's turn (the other scenarios' calls have no prompt).
        promptTokens: prompt !== undefined ? (r?.promptTokens ?? 0) : 0,
        promptChars: prompt !== undefined && r !== undefined ? prompt.chars : 0,
        cachedPromptTokens: r?.cachedTokens ?? 0,
        promptEvalMs: prompt !== undefined ? (r?.promptEvalMs ?? 0) : 0,
        outputTokens: r?.evalTokens ?? 0,
        error: ok ? "" : "the engine failed the call",
        loadMs: r?.loadMs ?? 0,
      });
      this.guard(release);
    });
  }

  /** Renews the call's ticket as the proxy does (every half lease) until the call ends. */
  private renewWhileRunning(scheduler: Scheduler, ticketId: string): { cancel(): void } {
    const everyMs = Math.max(1000, (scheduler.config.leaseS * 1000) / 2);
    let timer = { cancel: () => {} };
    const tick = () => {
      this.guard(scheduler.renew(ticketId, 0));
      timer = this.w.loop.at(this.w.loop.now + everyMs, tick);
    };
    timer = this.w.loop.at(this.w.loop.now + everyMs, tick);
    return { cancel: () => timer.cancel() };
  }

  /** The agent's sidecar: its scheduler, configured as the operator binds it, and its store. */
  private sidecarOf(ts: TurnState): Sidecar {
    const agent = ts.agent;
    const known = this.sidecars.get(agent.id);
    if (known !== undefined) return known;
    const policy = this.w.o.policy === "kubemoot" ? "kubemoot" : "time";
    // The binder's list, each model with its declared VRAM (Model.spec.vramMib), as the operator writes it.
    const candidates = agent.candidates.map((c) => {
      const vramMib = this.w.models.get(c.model)?.footprintMiB;
      return vramMib !== undefined ? { ...c, vramMib } : c;
    });
    const env = {
      [SETTINGS.candidatesMulling.name]: JSON.stringify(candidates),
      [SETTINGS.tolerance.name]: String(this.w.sc.tolerance),
      [SETTINGS.waitLimit.name]: String(this.waitLimitS),
      [SETTINGS.policy.name]: policy,
    };
    const store = this.state.storeFor(agent.id);
    const scheduler = new Scheduler({
      state: store,
      config: schedulerConfigFromEnv(env, agent.id),
      ops: this.ops,
      now: () => EPOCH_MS + this.w.loop.now,
      timers: this.timers,
      instanceId: `sim${this.sidecars.size}`,
      ...(this.w.o.planner !== undefined ? { plannerOverrides: this.w.o.planner } : {}),
      hooks: { onDecision: (e) => this.recordDecision(e) },
    });
    const sidecar = { scheduler, store };
    this.sidecars.set(agent.id, sidecar);
    return sidecar;
  }

  private recordDecision(e: DecisionEvent): void {
    const rec = this.w.recorder;
    rec.decided(e.decideMs);
    const call = this.calls.get(e.input);
    if (rec.detailed && call !== undefined) {
      rec.decisions.push(decisionRecord(this.w.loop.now, call, e.snapshot, e.index, e.decision));
    }
  }

  /** The sidecar's unload of a planned victim (POST /api/generate keep_alive 0). */
  private unload(endpoint: string, model: string): void {
    const gpu = this.w.providers.find((g) => endpointOf(g) === endpoint);
    if (gpu === undefined) throw new KubemootError(ErrorCode.Internal, `sim: unload at ${endpoint}, no GPU`);
    if (gpu instanceof SimFixedEngine) {
      // A fixed-model engine is never planned to unload: the run fails with this, not a swallowed error.
      this.failure ??= new KubemootError(
        ErrorCode.Internal,
        `sim: an unload planned on ${gpu.name}, a fixed-model engine`,
      );
      throw this.failure;
    }
    gpu.unload(model);
  }

  /** Work started from a synchronous event: whatever it throws fails the run at its end. */
  private guard(p: Promise<unknown>): void {
    p.catch((err: unknown) => {
      this.failure ??= err;
    });
  }
}
