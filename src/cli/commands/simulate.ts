import type { Command } from "../command.js";

// Not built yet (see the tracker): --help shows the planned flags; running it exits 2.
export const command: Command = {
  name: "simulate",
  summary: "discrete-event simulation of scheduling policies (the sim benchmark)",
  available: false,
  flags: {},
  run: async () => 2,
};
