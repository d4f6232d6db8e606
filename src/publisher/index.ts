// The provider publisher: probes each provider (Ollama's answers or another engine's, a DCGM exporter) and
// publishes its state, readiness following the consecutive-failure rule. The operator runs it,
// and so does a sidecar given --providers.
export { ProviderPublisher, type PublishedProvider } from "./publisher.js";
