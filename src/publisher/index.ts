// The provider publisher (docs/rules/binding.md §8, docs/rules/engines.md "Probing each
// engine"): probes each provider (Ollama's answers or another engine's, a DCGM exporter) and
// publishes its state on change plus a slow heartbeat (docs/rules/state.md §2.1), readiness
// following the consecutive-failure rule. The operator runs it, and so does a sidecar given
// --providers.
export { ProviderPublisher, type PublishedProvider } from "./publisher.js";
export { publishNeededFrom } from "./reader-marks.js";
