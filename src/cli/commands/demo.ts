import { DEMO_FLEET_NAMES, type DemoFleetName } from "../../demo/index.js";
import { ErrorCode, KubemootError } from "../../errors/index.js";
import { SETTINGS } from "../../settings/index.js";
import { type Command, numberFlag } from "../command.js";
import { runDemo } from "../run-demo.js";
import { settingFlags, settingFromFlag } from "../setting-flags.js";
import { webLaunchFromFlags } from "../web-flags.js";

export const command: Command = {
  name: "demo",
  summary:
    "standalone + two emulated GPUs + synthetic crew traffic through the proxy, with a live view (npm start)",
  details: `Runs everything in one process on the embedded store: the operator binds the example crew
(examples/crew) to the prod bundle (examples/prod: qwen3:32b/14b/8b) on an emulated RTX 5090
(32605 MiB) and RTX 4090 (24563 MiB); the crew's agents send calls through the local proxy.
--fleet mixed puts an Ollama card and a vLLM card side by side (examples/mixed): the RTX 5090
on Ollama and an emulated vLLM server on an L40S (46068 MiB) serving qwen3:14b; the crew's
Ollama-API calls placed there are translated to its OpenAI routes by the proxy.
--fleet real puts a real llama.cpp beside the Ollama card (examples/real): the engine command
(node-llama-cpp on this machine's CPU, a process of its own, 2 slots) serving kubemoot-tiny, a
model generated at start; its answers are noise, its tokens, context and slots are real. It
needs the development install (node-llama-cpp).
On a terminal the view redraws about once a second; otherwise it prints one line per call and
a status line every 5 seconds. Ctrl-C stops everything.`,
  flags: {
    duration: {
      type: "string",
      default: "0",
      description: "stop after this many seconds (0 = until Ctrl-C)",
      value: "SECONDS",
    },
    fleet: {
      type: "string",
      default: "prod",
      description: `cards and example bundle: ${DEMO_FLEET_NAMES.join(", ")} (examples/prod: two Ollama cards; examples/mixed: Ollama + vLLM; examples/real: Ollama + a real llama.cpp on the CPU)`,
      value: "NAME",
    },
    seed: { type: "string", default: "1", description: "random seed of the synthetic traffic", value: "N" },
    speed: {
      type: "string",
      default: "10",
      description: "how much faster than real GPUs the emulated ones load and generate",
      value: "X",
    },
    ...settingFlags(
      "demo",
      SETTINGS.webListen,
      SETTINGS.webTokenFile,
      SETTINGS.webTraceUrl,
      SETTINGS.logLevel,
    ),
  },
  async run(flags, _positionals, host) {
    const durationS = numberFlag(flags, "duration", 0);
    const seed = Math.floor(numberFlag(flags, "seed", 0));
    const speed = numberFlag(flags, "speed", 0.01);
    const fleet = String(flags.fleet);
    if (!(DEMO_FLEET_NAMES as readonly string[]).includes(fleet))
      throw new KubemootError(
        ErrorCode.InvalidConfig,
        `--fleet: expected one of ${DEMO_FLEET_NAMES.join(", ")}, got "${fleet}"`,
        { field: "--fleet" },
      );
    const stopSignal = new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
    return runDemo(host, {
      durationS,
      seed,
      speed,
      fleet: fleet as DemoFleetName,
      out: process.stdout,
      stopSignal,
      logLevel: settingFromFlag(flags, SETTINGS.logLevel),
      web: webLaunchFromFlags(flags),
    });
  },
};
