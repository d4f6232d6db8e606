// An emulated Ollama card of one slot with one model loaded: the cards the prompt-cache tests
// place conversations on.
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.js";

/** A card (24,563 MiB, 16k context, one slot, time ×50) with `model` (4,863 MiB) warm. */
export async function warmOneSlotCard(model: string, outputTokens: number): Promise<EmulatorHandle> {
  const card = await startEmulator({
    listen: "127.0.0.1:0",
    vramMiB: 24_563,
    models: { [model]: 4863 },
    contextLength: 16_384,
    numParallel: 1,
    timeScale: 0.02,
    outputTokens,
  });
  await (await fetch(`${card.url}/api/generate`, { method: "POST", body: JSON.stringify({ model }) })).text();
  return card;
}
