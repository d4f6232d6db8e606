// The kubemoot-scheduler command (docs/design.md §2): bin/kubemoot-scheduler.js runs `main`
// with sidecar/'s SidecarHost, which implements the starts declared here.
export type { LaunchedSidecar, SidecarHost } from "./host.js";
export { main } from "./main.js";
