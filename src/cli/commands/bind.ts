import type { Command } from "../command.js";

// Not built yet: see the tracker. The command prints its planned flags and exits 2.
export const command: Command = {
  name: "bind",
  summary: "TODO",
  available: false,
  flags: {},
  run: async () => 2,
};
