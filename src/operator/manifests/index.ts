// Manifest sources for the operator and the bind dry run: read a directory of YAML/JSON
// documents into the binder's typed objects, with errors that name the file, the document,
// the object and the field (src/manifests does the generic reading).
export { API_VERSION, DEFAULT_ARCHETYPE, DEFAULT_NAMESPACE, KINDS, type Kind, OTHER_KINDS } from "./kinds.js";
export {
  emptyManifestSet,
  type ManifestSet,
  type ManifestSource,
  type ParsedManifests,
  parseManifests,
  type SkippedDocument,
  toSnapshot,
} from "./parse.js";
export { loadManifests, loadProviderStateFile, readManifests } from "./read.js";
