// Manifest sources for the operator and the bind dry run: read a directory of YAML/JSON
// documents into the binder's typed objects, with errors that name the file, the document,
// the object and the field (src/manifests does the generic reading).
export { API_GROUP, type Kind, readMetadata, readObject } from "./kinds.js";
export { emptyManifestSet, type ManifestSet, parseManifests, toSnapshot } from "./parse.js";
export { loadManifests, loadProviderStateFile } from "./read.js";
