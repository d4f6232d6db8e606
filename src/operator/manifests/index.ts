// Manifest sources for the operator and the bind dry run: read a directory of YAML/JSON
// documents into the binder's typed objects, with errors that name the file, the document,
// the object and the field.
export {
  type DocumentRef,
  describe,
  FieldReader,
  formatIssue,
  isObject,
  type Json,
  type ManifestIssue,
} from "./fields.js";
export { API_VERSION, DEFAULT_ARCHETYPE, DEFAULT_NAMESPACE, KINDS, type Kind, OTHER_KINDS } from "./kinds.js";
export {
  emptyManifestSet,
  type ManifestSet,
  type ManifestSource,
  manifestError,
  type ParsedManifests,
  parseManifests,
  type SkippedDocument,
  toSnapshot,
} from "./parse.js";
export {
  loadManifests,
  loadProviderStateFile,
  manifestFiles,
  type RawDocument,
  readDocuments,
  readManifests,
} from "./read.js";
