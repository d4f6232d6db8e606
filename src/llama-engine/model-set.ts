// The models an engine serves (docs/rules/engines.md "A real llama.cpp engine"): every `.gguf`
// in one directory, its id the file name without `.gguf`. Each model gets one llama.cpp context
// with one sequence per slot; like llama-server's -c without --kv-unified, the context given is
// shared out among the slots (and capped at the model's training context), so a slot's context
// is ctx / parallel, rounded up to llama.cpp's 256-token alignment.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel } from "node-llama-cpp";
import { ErrorCode, KubemootError } from "../errors/index.js";
import { ChatTemplate } from "./chat.js";
import { SlotPool } from "./slot-pool.js";

/** A slot's context below this is no context at all. */
const MIN_SLOT_CONTEXT = 16;

/** llama.cpp's vocabulary type numbers (enum llama_vocab_type), as /v1/models `meta.vocab_type` gives them. */
const VOCAB_TYPES: Record<string, number> = { none: 0, spm: 1, bpe: 2, wpm: 3, ugm: 4, rwkv: 5 };

export interface EngineModel {
  id: string;
  file: string;
  model: LlamaModel;
  context: LlamaContext;
  pool: SlotPool<LlamaContextSequence>;
  /** A slot's context (tokens): what /props reports as n_ctx. */
  nCtx: number;
  template: ChatTemplate;
  meta: {
    vocab_type: number;
    n_vocab: number;
    n_ctx_train: number;
    n_embd: number;
    n_params: number;
    size: number;
  };
}

export interface ModelSetOptions {
  dir: string;
  parallel: number;
  /** Context per model, shared by its slots; 0 = the model's training context. */
  ctx: number;
  threads: number;
  maxDeferred: number;
}

/** The `.gguf` files of `dir`, by id, sorted. */
export function modelFiles(dir: string): { id: string; file: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new KubemootError(ErrorCode.InvalidConfig, `--models: cannot read "${dir}" (${code})`, {
      field: "--models",
    });
  }
  const files = names
    .filter((n) => n.endsWith(".gguf") && n.length > ".gguf".length)
    .sort()
    .map((n) => ({ id: n.slice(0, -".gguf".length), file: path.join(dir, n) }))
    .filter((m) => statSync(m.file).isFile());
  if (files.length === 0) {
    throw new KubemootError(ErrorCode.InvalidConfig, `--models: no .gguf file in "${dir}"`, {
      field: "--models",
    });
  }
  return files;
}

async function loadOne(llama: Llama, id: string, file: string, o: ModelSetOptions): Promise<EngineModel> {
  const model = await llama.loadModel({ modelPath: file, gpuLayers: 0 });
  const train = model.trainContextSize;
  const perSlot = Math.min(train, Math.floor((o.ctx > 0 ? o.ctx : train) / o.parallel));
  if (perSlot < MIN_SLOT_CONTEXT) {
    await model.dispose();
    throw new KubemootError(
      ErrorCode.InvalidConfig,
      `--ctx: ${o.ctx || train} tokens over ${o.parallel} slots leaves ${perSlot} per slot for ${id}; give at least ${MIN_SLOT_CONTEXT * o.parallel}`,
      { field: "--ctx" },
    );
  }
  const context = await model.createContext({
    contextSize: perSlot,
    sequences: o.parallel,
    threads: o.threads,
  });
  const sequences = Array.from({ length: o.parallel }, () => context.getSequence());
  const info = model.fileInfo;
  return {
    id,
    file,
    model,
    context,
    pool: new SlotPool(sequences, o.maxDeferred),
    nCtx: context.contextSize,
    template: new ChatTemplate(info.metadata.tokenizer?.chat_template, {
      bos: model.tokens.bosString ?? "",
      eos: model.tokens.eosString ?? "",
    }),
    meta: {
      vocab_type: VOCAB_TYPES[model.vocabularyType] ?? 0,
      n_vocab: info.metadata.tokenizer?.ggml?.tokens?.length ?? 0,
      n_ctx_train: train,
      n_embd: model.fileInsights.embeddingVectorSize ?? 0,
      n_params: model.fileInsights.totalParameters,
      size: model.size,
    },
  };
}

/** Loads every model of `o.dir`; a model llama.cpp refuses fails the start, naming its file. */
export async function loadModels(llama: Llama, o: ModelSetOptions): Promise<EngineModel[]> {
  const loaded: EngineModel[] = [];
  try {
    for (const { id, file } of modelFiles(o.dir)) {
      try {
        loaded.push(await loadOne(llama, id, file, o));
      } catch (err) {
        if (KubemootError.is(err)) throw err;
        throw new KubemootError(
          ErrorCode.InvalidConfig,
          `--models: llama.cpp cannot load ${file}: ${(err as Error).message}`,
          { field: "--models", cause: err },
        );
      }
    }
  } catch (err) {
    await disposeModels(loaded);
    throw err;
  }
  return loaded;
}

export async function disposeModels(models: readonly EngineModel[]): Promise<void> {
  for (const m of models) {
    m.pool.rejectAll(new KubemootError(ErrorCode.ShuttingDown, "the engine is shutting down"));
    await m.context.dispose();
    await m.model.dispose();
  }
}
