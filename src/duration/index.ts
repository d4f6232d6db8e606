// Durations in configuration (CRD fields, environment): Kubernetes' metav1.Duration notation,
// validated with messages that name the field. (The emulator keeps its own Go-exact parser for
// Ollama's keep_alive, whose rules and error texts are Ollama's.)
export { formatDuration, parseDuration } from "./duration.js";
