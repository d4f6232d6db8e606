// The demo's parts: two emulated GPUs with the example manifests, synthetic crew traffic, and
// the live view. The CLI's `demo` command (src/cli/run-demo.ts) starts the standalone
// scheduler over them.
export { startDemoFleet, writeDemoManifests } from "./fleet.js";
export { type CallResult, CrewTraffic, type DemoAgent } from "./traffic.js";
export {
  addResult,
  emptyTotals,
  placementLine,
  renderScreen,
  type Screen,
  statusLine,
  totalsLine,
} from "./view.js";
