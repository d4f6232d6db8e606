import { type Command, numberFlag } from "../command.js";
import { runDemo } from "../run-demo.js";

export const command: Command = {
  name: "demo",
  summary:
    "standalone + two emulated GPUs + synthetic crew traffic through the proxy, with a live view (npm start)",
  details: `Runs everything in one process on the embedded store: the operator binds the example crew
(examples/crew) to the prod bundle (examples/prod: qwen3:32b/14b/8b) on an emulated RTX 5090
(32605 MiB) and RTX 4090 (24563 MiB); the crew's agents send calls through the local proxy.
On a terminal the view redraws about once a second; otherwise it prints one line per call and
a status line every 5 seconds. Ctrl-C stops everything.`,
  flags: {
    duration: {
      type: "string",
      default: "0",
      description: "stop after this many seconds (0 = until Ctrl-C)",
      value: "SECONDS",
    },
    seed: { type: "string", default: "1", description: "random seed of the synthetic traffic", value: "N" },
    speed: {
      type: "string",
      default: "10",
      description: "how much faster than real GPUs the emulated ones load and generate",
      value: "X",
    },
    "log-level": {
      type: "string",
      default: "warn",
      env: "KUBEMOOT_LOG_LEVEL",
      description: "pino log level (stderr)",
    },
  },
  async run(flags) {
    const durationS = numberFlag(flags, "duration", 0);
    const seed = Math.floor(numberFlag(flags, "seed", 0));
    const speed = numberFlag(flags, "speed", 0.01);
    const stopSignal = new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
    return runDemo({
      durationS,
      seed,
      speed,
      out: process.stdout,
      stopSignal,
      logLevel: String(flags["log-level"]),
    });
  },
};
