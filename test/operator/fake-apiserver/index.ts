// The FAKE Kubernetes API server for the operator's tests (see server.ts and ../README.md).
export { FAKE_RESOURCES, FakeApiServer, type Fault, type Obj, type RecordedRequest } from "./server.js";
