// The demo's parts: GPUs (a fleet described as data: emulators, and a real llama.cpp for
// `--fleet real`) with the example manifests,
// synthetic crew traffic, and the live view. The CLI's `demo` command (src/cli/run-demo.ts)
// starts the standalone scheduler over them.
export {
  DEMO_FLEET_NAMES,
  DEMO_FLEETS,
  type DemoFleet,
  type DemoFleetName,
  startDemoFleet,
  writeDemoManifests,
} from "./fleet.js";
export { type CallResult, CrewTraffic, type DemoAgent } from "./traffic.js";
export {
  addResult,
  type CardView,
  emptyTotals,
  placementLine,
  renderScreen,
  type Screen,
  statusLine,
  totalsLine,
} from "./view.js";
