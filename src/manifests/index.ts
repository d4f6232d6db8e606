// The generic manifest reader, shared by every reader of kinds (the operator's binder kinds,
// the fleet, the topology dry run): finding and parsing documents, reading their fields, and
// issues that name the file, the document, the object and the field.
export { manifestFiles, type RawDocument, readDocuments } from "./documents.js";
export { describe, FieldReader, isObject, type Json } from "./field-reader.js";
export { type DocumentRef, formatIssue, type ManifestIssue, manifestError } from "./issues.js";
