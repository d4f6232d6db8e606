export { frameMessage, MessageReader } from "./framing.js";
export type { GrpcCall, GrpcHandlerOptions, GrpcMethod, Send } from "./server.js";
export { grpcStreamHandler } from "./server.js";
export {
  encodeGrpcMessage,
  GrpcCode,
  GrpcStatusError,
  malformedMessage,
  parseGrpcTimeout,
} from "./status.js";
