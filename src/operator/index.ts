// The operator: prober and publisher, binder, fleet, topology and webhook parts (docs/design.md §2, §7).
// Other folders (the CLI) use only these names.

export { loadManifests, loadProviderStateFile, toSnapshot } from "./manifests/index.js";
export { type OperatorOptions, publishedProvider, type RunningOperator, startOperator } from "./operator.js";
export { parseAllowedHosts } from "./topology/index.js";
export { DEFAULT_INJECTION_OPTIONS, loadInjectionOptions } from "./webhook/index.js";
