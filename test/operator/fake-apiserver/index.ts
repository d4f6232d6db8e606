// The FAKE Kubernetes API server for the operator's tests (see server.ts and ../README.md).
export { FAKE_RESOURCES, type Obj } from "./resources.js";
export { FakeApiServer, type Fault, type RecordedRequest } from "./server.js";
